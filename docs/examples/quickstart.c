/* Compress and decompress an i32 array with the C API. */
#include <mans/mans.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    enum { N = 5000 };
    static int32_t data[N], back[N];
    for (int i = 0; i < N; ++i) data[i] = (i * 7) % 1000 - 500;

    size_t cap = mans_compress_bound(sizeof data), size = 0, out = 0;
    unsigned char* stream = malloc(cap);
    mans_cctx* c = mans_cctx_create();
    mans_dctx* d = mans_dctx_create();
    if (!stream || !c || !d) return 1;
    mans_cctx_set_param(c, MANS_PARAM_DTYPE, MANS_DTYPE_I32);
    mans_status s = mans_compress(c, stream, cap, data, sizeof data, &size);
    if (s == MANS_OK) s = mans_decompress(d, back, sizeof back, stream, size, &out);
    if (s != MANS_OK) {
        fprintf(stderr, "%s: %s\n", mans_status_name(s), mans_status_message(s));
        return 1;
    }
    printf("%zu -> %zu bytes, %s\n", sizeof data, size, memcmp(data, back, sizeof data) ? "DIFFERENT" : "same");
    mans_cctx_free(c);
    mans_dctx_free(d);
    free(stream);
    return 0;
}
