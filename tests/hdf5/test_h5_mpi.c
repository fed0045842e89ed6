/*
 * test_h5_mpi.c - the mans filter under parallel HDF5 (OpenMPI build).
 *
 *   test_h5_mpi write FILE DATA_DIR   collective filtered writes, each rank
 *                                     owning whole chunks (some ranks none)
 *   test_h5_mpi read  FILE DATA_DIR   any rank count; each rank reads a slab
 *                                     that cuts across chunks and checks every
 *                                     value against the original
 *
 * Writes use the link-in API (mans_h5_set_*); reads never register the
 * filter, so HDF5 loads the plugin from HDF5_PLUGIN_PATH. HDF5 1.10 needs
 * collective transfers and H5D_FILL_TIME_NEVER for filtered parallel
 * writes. Exit status 0 only when every value checks.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "mans/h5filter.h"

typedef struct field {
    const char* name; /* dataset */
    const char* file; /* in DATA_DIR */
    hid_t mem_type, file_type;
    size_t elem;
    hsize_t dims[3], chunk[3];
    int rank;
    int mode;     /* mans_h5_mode */
    double bound; /* for floats */
    double fill;  /* NAN = none */
} field;

static const field fields[] = {
    {"navy", "navy_uwnd_132x73x144.f32", 0, 0, 4, {132, 73, 144}, {12, 73, 144}, 3, MANS_H5_ABS, 1e-2, NAN},
    {"levitus", "levitus_temp_20x180x360.f32", 0, 0, 4, {20, 180, 360}, {3, 100, 360}, 3, MANS_H5_REL, 1e-4, -1e10},
    {"exafel", "exafel_1024kB.u16", 0, 0, 2, {1024, 512, 1}, {128, 512, 1}, 2, MANS_H5_LOSSLESS, 0, NAN},
};
enum { NFIELDS = sizeof fields / sizeof fields[0] };

static int rank_, nranks;

static void* load(const char* dir, const field* f, size_t* count) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, f->file);
    FILE* in = fopen(path, "rb");
    if (!in) return NULL;
    *count = 1;
    for (int d = 0; d < f->rank; ++d) *count *= f->dims[d];
    void* v = malloc(*count * f->elem);
    const size_t got = v ? fread(v, f->elem, *count, in) : 0;
    fclose(in);
    if (got != *count) {
        free(v);
        return NULL;
    }
    return v;
}

static hsize_t row_bytes(const field* f) {
    hsize_t b = f->elem;
    for (int d = 1; d < f->rank; ++d) b *= f->dims[d];
    return b;
}

/* Rows [*first, *first + *rows) of dimension 0 that this rank handles:
 * whole chunks when writing, an even split when reading. */
static void my_rows(const field* f, int whole_chunks, hsize_t* first, hsize_t* rows) {
    if (whole_chunks) {
        const hsize_t nchunks = (f->dims[0] + f->chunk[0] - 1) / f->chunk[0];
        const hsize_t c0 = nchunks * (hsize_t)rank_ / (hsize_t)nranks;
        const hsize_t c1 = nchunks * (hsize_t)(rank_ + 1) / (hsize_t)nranks;
        *first = c0 * f->chunk[0];
        const hsize_t end = c1 * f->chunk[0] < f->dims[0] ? c1 * f->chunk[0] : f->dims[0];
        *rows = end > *first ? end - *first : 0;
    } else {
        *first = f->dims[0] * (hsize_t)rank_ / (hsize_t)nranks;
        *rows = f->dims[0] * (hsize_t)(rank_ + 1) / (hsize_t)nranks - *first;
    }
}

static hid_t slab(hid_t space, const field* f, hsize_t first, hsize_t rows) {
    hsize_t start[3] = {first, 0, 0}, count[3];
    for (int d = 0; d < f->rank; ++d) count[d] = d == 0 ? rows : f->dims[d];
    if (rows == 0) { /* this rank takes part with an empty selection */
        H5Sselect_none(space);
        const hid_t mem = H5Scopy(space);
        if (mem >= 0) H5Sselect_none(mem);
        return mem;
    }
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    return H5Screate_simple(f->rank, count, NULL);
}

/* Creates (or opens read-only) a file over MPI-IO with collective metadata,
 * and the collective transfer list that filtered writes require. */
static hid_t open_parallel(const char* path, int create, hid_t* dxpl) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    if (create) H5Pset_coll_metadata_write(fapl, 1);
    const hid_t file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    *dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(*dxpl, H5FD_MPIO_COLLECTIVE);
    return file;
}

static int write_all(const char* path, const char* dir) {
    hid_t dxpl = -1;
    const hid_t file = open_parallel(path, 1, &dxpl);
    if (file < 0) return 1;
    int failures = 0;
    for (int i = 0; i < NFIELDS; ++i) {
        const field* f = &fields[i];
        size_t count = 0;
        unsigned char* data = load(dir, f, &count);
        if (!data) {
            fprintf(stderr, "rank %d: cannot read %s/%s\n", rank_, dir, f->file);
            return 1;
        }
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, f->rank, f->chunk);
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
        if (!isnan(f->fill)) {
            const float fill = (float)f->fill;
            H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill);
        }
        const herr_t set = f->mode == MANS_H5_LOSSLESS ? mans_h5_set_lossless(dcpl)
                                                       : mans_h5_set_error_bound(dcpl, f->mode, f->bound);
        hid_t space = H5Screate_simple(f->rank, f->dims, NULL);
        const hid_t ftype = f->elem == 4 ? H5T_IEEE_F32LE : H5T_STD_U16LE;
        const hid_t mtype = f->elem == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT16;
        hid_t dset = set < 0 ? -1 : H5Dcreate2(file, f->name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        hsize_t first, rows;
        my_rows(f, 1, &first, &rows);
        hid_t mem = slab(space, f, first, rows);
        const herr_t w = dset < 0 ? -1 : H5Dwrite(dset, mtype, mem, space, dxpl, data + first * row_bytes(f));
        if (w < 0) {
            fprintf(stderr, "rank %d: writing %s failed\n", rank_, f->name);
            H5Eprint2(H5E_DEFAULT, stderr);
            ++failures;
        }
        H5Sclose(mem);
        if (dset >= 0) H5Dclose(dset);
        H5Sclose(space);
        H5Pclose(dcpl);
        free(data);
    }
    H5Pclose(dxpl);
    H5Fclose(file);
    return failures;
}

static int read_check(const char* path, const char* dir, unsigned long long* checked) {
    hid_t dxpl = -1;
    const hid_t file = open_parallel(path, 0, &dxpl);
    if (file < 0) return 1;
    int failures = 0;
    for (int i = 0; i < NFIELDS; ++i) {
        const field* f = &fields[i];
        size_t count = 0;
        unsigned char* orig = load(dir, f, &count);
        if (!orig) return 1;
        /* The bound a relative mode gives: at most bound x the range of the
         * finite, non-fill, nonzero values (each chunk's range is inside it). */
        double eb = f->bound;
        if (f->mode == MANS_H5_REL) {
            double lo = INFINITY, hi = -INFINITY;
            for (size_t k = 0; k < count; ++k) {
                const double x = ((const float*)orig)[k];
                if (!isfinite(x) || x == f->fill || x == 0) continue;
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
            }
            eb = f->bound * (hi - lo);
        }
        hid_t dset = H5Dopen2(file, f->name, H5P_DEFAULT);
        hid_t space = dset < 0 ? -1 : H5Dget_space(dset);
        hsize_t first, rows;
        my_rows(f, 0, &first, &rows);
        const size_t n = (size_t)(rows * row_bytes(f) / f->elem);
        unsigned char* back = malloc(n * f->elem + 1);
        hid_t mem = space < 0 ? -1 : slab(space, f, first, rows);
        const hid_t mtype = f->elem == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT16;
        if (dset < 0 || H5Dread(dset, mtype, mem, space, dxpl, back) < 0) {
            fprintf(stderr, "rank %d: reading %s failed\n", rank_, f->name);
            H5Eprint2(H5E_DEFAULT, stderr);
            ++failures;
        } else {
            const unsigned char* want = orig + first * row_bytes(f);
            size_t bad = 0;
            for (size_t k = 0; k < n; ++k) {
                if (f->elem == 2) {
                    bad += memcmp(want + 2 * k, back + 2 * k, 2) != 0;
                    continue;
                }
                const float x = ((const float*)want)[k], y = ((const float*)back)[k];
                if (!isfinite(x) || x == (float)f->fill) bad += memcmp(&x, &y, 4) != 0;
                else bad += !(fabs((double)x - (double)y) <= eb);
            }
            if (bad) fprintf(stderr, "rank %d: %s: %zu of %zu values wrong\n", rank_, f->name, bad, n);
            failures += bad != 0;
            *checked += n;
        }
        if (mem >= 0) H5Sclose(mem);
        if (space >= 0) H5Sclose(space);
        if (dset >= 0) H5Dclose(dset);
        free(back);
        free(orig);
    }
    H5Pclose(dxpl);
    H5Fclose(file);
    return failures;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 4 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "read") != 0)) {
        if (rank_ == 0) fprintf(stderr, "usage: %s write|read FILE DATA_DIR\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    unsigned long long checked = 0, total = 0;
    const int writing = strcmp(argv[1], "write") == 0;
    int failures = writing ? write_all(argv[2], argv[3]) : read_check(argv[2], argv[3], &checked);
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&checked, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
        if (writing) printf("h5_mpi: %d ranks wrote %d filtered datasets collectively, %d failures\n", nranks, NFIELDS,
                            all_failures);
        else printf("h5_mpi: %d ranks checked %llu values, %d failures\n", nranks, total, all_failures);
    }
    MPI_Finalize();
    return all_failures == 0 ? 0 : 1;
}
