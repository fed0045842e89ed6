/* Progressive retrieval with the PRISM C API: compress a float grid at a
 * fine bound, read it back at a coarse one, refine to everything. */
#include <mans/prism.h>

#include <math.h>
#include <stdio.h>

int main(void) {
    enum { NY = 100, NX = 120 };
    static float grid[NY * NX];
    for (int i = 0; i < NY * NX; ++i) grid[i] = (float)(15.0 + 10.0 * sin(0.05 * (i % NX)) * cos(0.04 * (i / NX)));

    mans_prism_params p;
    mans_prism_params_init(&p);
    p.type = MANS_PRISM_F32;
    p.rank = 2;
    p.dims[0] = NY; /* slowest first */
    p.dims[1] = NX;
    p.mode = MANS_PRISM_REL;
    p.error_bound = 1e-6;
    void* archive = NULL;
    size_t size = 0;
    if (mans_prism_compress(grid, sizeof grid, &p, &archive, &size) != MANS_OK) return 1;

    mans_prism_reader* r = NULL;
    mans_prism_result* x = NULL;
    mans_prism_stats st;
    int ok = mans_prism_open_memory(archive, size, &r) == MANS_OK &&
             mans_prism_retrieve(r, MANS_PRISM_TARGET_REL, 1e-3, 0, &x) == MANS_OK &&
             mans_prism_result_stats(x, &st) == MANS_OK;
    if (ok) printf("rel 1e-3: read %llu of %zu bytes, error <= %g\n", (unsigned long long)st.bytes_read, size,
                   st.max_abs_error_bound);
    ok = ok && mans_prism_refine(r, x, MANS_PRISM_TARGET_FULL, 0, 0) == MANS_OK &&
         mans_prism_result_stats(x, &st) == MANS_OK;
    if (ok) printf("full: %llu more bytes, error <= %g\n", (unsigned long long)st.bytes_read_step,
                   st.max_abs_error_bound);
    mans_prism_result_free(x);
    mans_prism_close(r);
    mans_prism_free(archive);
    return ok ? 0 : 1;
}
