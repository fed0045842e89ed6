/* C consumer: mans.h compiles as C and the library links from a C program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mans/mans.h>

int main(void) {
    enum { N = 5000 };
    static int32_t data[N], back[N];
    for (int i = 0; i < N; ++i) data[i] = (i * 7) % 1000 - 500;
    mans_cctx* cc = mans_cctx_create();
    mans_dctx* dc = mans_dctx_create();
    size_t cap = mans_compress_bound(sizeof data), csize = 0, dsize = 0;
    unsigned char* c = (unsigned char*)malloc(cap);
    if (!cc || !dc || !c) return 1;
    if (mans_cctx_set_param(cc, MANS_PARAM_DTYPE, MANS_DTYPE_I32) != MANS_OK) return 1;
    mans_status st = mans_compress(cc, c, cap, data, sizeof data, &csize);
    if (st != MANS_OK) { fprintf(stderr, "compress: %s\n", mans_status_name(st)); return 1; }
    st = mans_decompress(dc, back, sizeof back, c, csize, &dsize);
    if (st != MANS_OK) { fprintf(stderr, "decompress: %s\n", mans_status_name(st)); return 1; }
    if (dsize != sizeof data || memcmp(data, back, sizeof data) != 0) { fprintf(stderr, "differs\n"); return 1; }
    mans_cctx_free(cc);
    mans_dctx_free(dc);
    free(c);
    printf("C consumer ok (%zu -> %zu bytes)\n", sizeof data, csize);
    return 0;
}
