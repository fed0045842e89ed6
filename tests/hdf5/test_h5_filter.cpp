// test_h5_filter.cpp - the mans HDF5 filter through the HDF5 library (link-in
// API, libmans_hdf5) and its chunk logic directly: every integer dtype and
// f32/f64 at several bounds on real fields from ../shared/data, chunked with
// partial edge chunks; big-endian types; NaN/Inf/fill values; raw fallback;
// progressive reading; hostile chunks and cd_values; data-independent
// set_local.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "chunk_codec.h"
#include "h5_test_util.hpp"
#include "mans/h5filter.h"

using namespace h5test;

namespace {

struct Silence {  // HDF5 prints error stacks by default; the tests read them instead
    Silence() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
} silence;

herr_t lossless(hid_t dcpl) { return mans_h5_set_lossless(dcpl); }

std::function<herr_t(hid_t)> bounded(mans_h5_mode mode, double bound) {
    return [=](hid_t dcpl) { return mans_h5_set_error_bound(dcpl, mode, bound); };
}

// A fill value matches by bit pattern, as in PRISM (-0.0 is not the +0.0 fill).
template <class T>
bool is_fill(T x, const std::vector<double>& fills) {
    return std::any_of(fills.begin(), fills.end(), [&](double f) {
        const T t = static_cast<T>(f);
        return std::memcmp(&t, &x, sizeof(T)) == 0;
    });
}

// Per-chunk value ranges over the values a relative bound is measured on
// (finite, not a fill value).
template <class T>
std::vector<double> chunk_ranges(const std::vector<T>& v, const std::vector<hsize_t>& dims,
                                 const std::vector<hsize_t>& chunk, const std::vector<double>& fills,
                                 std::vector<std::size_t>* chunk_of) {
    const std::size_t rank = dims.size();
    std::vector<std::size_t> nchunks(rank);
    std::size_t total = 1;
    for (std::size_t d = 0; d < rank; ++d) total *= (nchunks[d] = (dims[d] + chunk[d] - 1) / chunk[d]);
    std::vector<double> lo(total, INFINITY), hi(total, -INFINITY);
    chunk_of->assign(v.size(), 0);
    std::vector<hsize_t> coord(rank, 0);
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::size_t c = 0;
        for (std::size_t d = 0; d < rank; ++d) c = c * nchunks[d] + coord[d] / chunk[d];
        (*chunk_of)[i] = c;
        const double x = static_cast<double>(v[i]);
        if (std::isfinite(x) && !is_fill(v[i], fills)) {
            lo[c] = std::min(lo[c], x);
            hi[c] = std::max(hi[c], x);
        }
        for (std::size_t d = rank; d-- > 0;) {
            if (++coord[d] < dims[d]) break;
            coord[d] = 0;
        }
    }
    std::vector<double> range(total, 0);
    for (std::size_t c = 0; c < total; ++c) range[c] = hi[c] > lo[c] ? hi[c] - lo[c] : 0;
    return range;
}

// Checks a lossy read: special values (non-finite, fills) bit-exact, all
// others within the bound (absolute, or relative to their chunk's range).
template <class T>
void check_lossy(const std::vector<T>& orig, const std::vector<T>& back, const std::vector<hsize_t>& dims,
                 const std::vector<hsize_t>& chunk, mans_h5_mode mode, double bound, std::vector<double> fills) {
    REQUIRE(back.size() == orig.size());
    if (mode == MANS_H5_REL) fills.push_back(0.0);  // the filter keeps zeros exactly for a relative bound
    std::vector<std::size_t> chunk_of;
    const std::vector<double> range = chunk_ranges(orig, dims, chunk, fills, &chunk_of);
    std::size_t bad = 0, exact_bad = 0;
    double worst = 0;
    for (std::size_t i = 0; i < orig.size(); ++i) {
        const double x = static_cast<double>(orig[i]);
        if (!std::isfinite(x) || is_fill(orig[i], fills)) {
            if (std::memcmp(&orig[i], &back[i], sizeof(T)) != 0) ++exact_bad;
            continue;
        }
        const double eb = mode == MANS_H5_REL ? bound * range[chunk_of[i]] : bound;
        const double err = std::fabs(x - static_cast<double>(back[i]));
        worst = std::max(worst, eb > 0 ? err / eb : (err > 0 ? INFINITY : 0));
        if (!(err <= eb)) ++bad;
    }
    INFO("worst error / bound = " << worst);
    CHECK(exact_bad == 0);
    CHECK(bad == 0);
}

template <class T>
hid_t native_type();
template <> hid_t native_type<std::uint8_t>() { return H5T_NATIVE_UINT8; }
template <> hid_t native_type<std::int8_t>() { return H5T_NATIVE_INT8; }
template <> hid_t native_type<std::uint16_t>() { return H5T_NATIVE_UINT16; }
template <> hid_t native_type<std::int16_t>() { return H5T_NATIVE_INT16; }
template <> hid_t native_type<std::uint32_t>() { return H5T_NATIVE_UINT32; }
template <> hid_t native_type<std::int32_t>() { return H5T_NATIVE_INT32; }
template <> hid_t native_type<std::uint64_t>() { return H5T_NATIVE_UINT64; }
template <> hid_t native_type<std::int64_t>() { return H5T_NATIVE_INT64; }
template <> hid_t native_type<float>() { return H5T_NATIVE_FLOAT; }
template <> hid_t native_type<double>() { return H5T_NATIVE_DOUBLE; }

// Writes through the filter, reads back; returns the stored bytes.
template <class T>
hsize_t roundtrip(const std::string& stem, hid_t ftype, const std::vector<T>& data, const std::vector<hsize_t>& dims,
                  const std::vector<hsize_t>& chunk, const std::function<herr_t(hid_t)>& filter, std::vector<T>* back,
                  double fill = NAN) {
    const std::string path = temp_path(stem);
    {
        Id file = create_file(path);
        REQUIRE(file.ok());
        Id dcpl = chunked_dcpl(chunk, filter);
        REQUIRE(dcpl.ok());
        if (!std::isnan(fill)) {
            const T f = static_cast<T>(fill);
            REQUIRE(H5Pset_fill_value(dcpl, native_type<T>(), &f) >= 0);
        }
        INFO(error_stack_text());
        REQUIRE(write_dataset(file, "x", ftype, native_type<T>(), dims, dcpl, data.data()));
    }
    Id file = open_file(path);
    REQUIRE(file.ok());
    back->assign(data.size(), T{});
    INFO(error_stack_text());
    REQUIRE(read_dataset(file, "x", native_type<T>(), back->data()));
    Id dset(H5Dopen2(file, "x", H5P_DEFAULT), H5Dclose);
    return H5Dget_storage_size(dset);
}

template <class T>
void lossless_case(const char* what, hid_t ftype, const std::vector<T>& data, const std::vector<hsize_t>& dims,
                   const std::vector<hsize_t>& chunk) {
    INFO(what);
    std::vector<T> back;
    const hsize_t stored = roundtrip(std::string("lossless_") + what, ftype, data, dims, chunk, lossless, &back);
    CHECK(std::memcmp(back.data(), data.data(), data.size() * sizeof(T)) == 0);
    CHECK(stored < data.size() * sizeof(T));
    WARN(what << ": " << data.size() * sizeof(T) << " -> " << stored << " bytes");
}

template <class T, class S>
std::vector<T> convert(const std::vector<S>& v, std::int64_t offset = 0) {
    std::vector<T> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(static_cast<std::int64_t>(v[i]) + offset);
    return out;
}

}  // namespace

TEST_CASE("the filter is registered with both directions", "[h5]") {
    REQUIRE(mans_h5_register() >= 0);
    REQUIRE(mans_h5_register() >= 0);  // twice is fine
    CHECK(H5Zfilter_avail(MANS_H5_FILTER_ID) > 0);
    unsigned int config = 0;
    REQUIRE(H5Zget_filter_info(MANS_H5_FILTER_ID, &config) >= 0);
    CHECK((config & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0);
    CHECK((config & H5Z_FILTER_CONFIG_DECODE_ENABLED) != 0);
}

TEST_CASE("every integer dtype round-trips bit-exact on real data with partial edge chunks", "[h5]") {
    const std::vector<std::uint16_t> exafel = read_shared_as<std::uint16_t>("exafel_1024kB.u16");
    const std::vector<std::int16_t> oisst = read_shared_as<std::int16_t>("oisst_sst_1x1x90x180.i16");
    REQUIRE(exafel.size() == 1024 * 512);
    REQUIRE(oisst.size() == 90 * 180);
    const std::vector<hsize_t> edims{1024, 512}, echunk{100, 300};  // 11 x 2 chunks, both edges partial
    const std::vector<hsize_t> odims{1, 1, 90, 180}, ochunk{1, 1, 32, 50};

    std::vector<std::uint8_t> u8(exafel.size());
    std::vector<std::int8_t> i8(exafel.size());
    for (std::size_t i = 0; i < exafel.size(); ++i) {  // detector counts above the pedestal, clipped
        const int above = std::clamp(static_cast<int>(exafel[i]) - 1450, 0, 255);
        u8[i] = static_cast<std::uint8_t>(above);
        i8[i] = static_cast<std::int8_t>(above - 128);
    }
    lossless_case("u8", H5T_STD_U8LE, u8, edims, echunk);
    lossless_case("i8", H5T_STD_I8LE, i8, edims, echunk);
    lossless_case("u16", H5T_STD_U16LE, exafel, edims, echunk);
    lossless_case("u16 big-endian", H5T_STD_U16BE, exafel, edims, echunk);
    lossless_case("i16", H5T_STD_I16LE, oisst, odims, ochunk);
    lossless_case("i16 big-endian", H5T_STD_I16BE, oisst, odims, ochunk);
    lossless_case("u32", H5T_STD_U32LE, convert<std::uint32_t>(exafel, 100000), edims, echunk);
    lossless_case("i32", H5T_STD_I32LE, convert<std::int32_t>(oisst), odims, ochunk);
    lossless_case("i32 big-endian", H5T_STD_I32BE, convert<std::int32_t>(oisst, -70000), odims, ochunk);
    lossless_case("u64", H5T_STD_U64LE, convert<std::uint64_t>(exafel, 1ll << 40), edims, echunk);
    lossless_case("i64", H5T_STD_I64LE, convert<std::int64_t>(oisst, -(1ll << 50)), odims, ochunk);
}

TEST_CASE("integer datasets stay lossless under an error bound", "[h5]") {
    const std::vector<std::int16_t> oisst = read_shared_as<std::int16_t>("oisst_sst_1x1x90x180.i16");
    std::vector<std::int16_t> back;
    roundtrip("int_bound", H5T_STD_I16LE, oisst, {90, 180}, {40, 64}, bounded(MANS_H5_ABS, 100.0), &back);
    CHECK(back == oisst);
}

TEST_CASE("floats and doubles meet absolute and relative bounds on real fields", "[h5]") {
    struct Field {
        const char* file;
        std::vector<hsize_t> dims, chunk;
        double fill;  // NaN = none set on the dataset
    };
    const Field f32_fields[] = {
        {"echam5_t_17x96x192.f32", {17, 96, 192}, {5, 40, 100}, NAN},
        {"navy_uwnd_132x73x144.f32", {132, 73, 144}, {20, 73, 50}, NAN},
        {"levitus_temp_20x180x360.f32", {20, 180, 360}, {7, 64, 100}, -1e10},  // 44.5 % fill
        {"cosmo_hsurf_438x450.f32", {438, 450}, {100, 128}, NAN},                // 43 % zeros
    };
    const std::pair<mans_h5_mode, double> bounds[] = {
        {MANS_H5_ABS, 1e-1}, {MANS_H5_ABS, 1e-3}, {MANS_H5_REL, 1e-3}, {MANS_H5_REL, 1e-5}};
    for (const Field& f : f32_fields) {
        const std::vector<float> data = read_shared_as<float>(f.file);
        for (const auto& [mode, bound] : bounds) {
            INFO(f.file << (mode == MANS_H5_REL ? " rel " : " abs ") << bound);
            std::vector<float> back;
            const hsize_t stored = roundtrip("f32", H5T_IEEE_F32LE, data, f.dims, f.chunk, bounded(mode, bound), &back,
                                             f.fill);
            std::vector<double> fills;
            if (!std::isnan(f.fill)) fills.push_back(f.fill);
            check_lossy(data, back, f.dims, f.chunk, mode, bound, fills);
            CHECK(stored < data.size() * sizeof(float));
        }
    }
    const std::vector<double> sdo = read_shared_as<double>("sdo_aia171_128x128.f64");
    for (const auto& [mode, bound] : bounds) {
        INFO("sdo f64 " << bound);
        std::vector<double> back;
        roundtrip("f64", H5T_IEEE_F64LE, sdo, {128, 128}, {50, 60}, bounded(mode, bound), &back);
        check_lossy(sdo, back, {128, 128}, {50, 60}, mode, bound, {});
    }
}

TEST_CASE("NaN, Inf and fill values come back bit for bit; big-endian floats work", "[h5]") {
    std::vector<float> t = read_shared_as<float>("echam5_t_17x96x192.f32");
    for (std::size_t i = 0; i < t.size(); i += 97) t[i] = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t i = 13; i < t.size(); i += 389) t[i] = (i & 1) ? INFINITY : -INFINITY;
    for (std::size_t i = 5; i < t.size(); i += 1001) t[i] = 9.96921e36f;  // a netCDF fill
    const std::vector<hsize_t> dims{17, 96, 192}, chunk{4, 32, 64};
    for (hid_t ftype : {H5T_IEEE_F32LE, H5T_IEEE_F32BE}) {
        for (mans_h5_mode mode : {MANS_H5_ABS, MANS_H5_REL}) {
            const double bound = mode == MANS_H5_ABS ? 0.05 : 1e-4;
            std::vector<float> back;
            roundtrip("special", ftype, t, dims, chunk, bounded(mode, bound), &back, 9.96921e36);
            check_lossy(t, back, dims, chunk, mode, bound, {9.96921e36f});
        }
    }
    std::vector<float> back;
    roundtrip("special_lossless", H5T_IEEE_F32BE, t, dims, chunk, lossless, &back);
    CHECK(std::memcmp(back.data(), t.data(), t.size() * sizeof(float)) == 0);
}

TEST_CASE("chunks that do not shrink are stored raw and read back exactly", "[h5]") {
    std::mt19937_64 rng(7);
    std::vector<std::uint64_t> noise(4000);
    for (auto& v : noise) v = rng();
    std::vector<std::uint64_t> back;
    const hsize_t stored = roundtrip("raw_u64", H5T_STD_U64LE, noise, {4000}, {1000}, lossless, &back);
    CHECK(back == noise);
    CHECK(stored == noise.size() * sizeof(std::uint64_t));  // every chunk raw, nothing added

    std::vector<float> fnoise(3000);
    for (auto& v : fnoise) v = static_cast<float>(static_cast<std::int64_t>(rng() >> 11)) * 1e-10f;
    std::vector<float> fback;
    roundtrip("raw_f32", H5T_IEEE_F32LE, fnoise, {3000}, {1000}, bounded(MANS_H5_ABS, 1e-30), &fback);
    CHECK(std::memcmp(fback.data(), fnoise.data(), fnoise.size() * sizeof(float)) == 0);

    std::vector<std::int32_t> one{-123456}, one_back;  // one-element chunks
    roundtrip("tiny", H5T_STD_I32LE, one, {1}, {1}, lossless, &one_back);
    CHECK(one_back == one);
}

TEST_CASE("float lossless mode is bit-exact", "[h5]") {
    const std::vector<double> sdo = read_shared_as<double>("sdo_aia171_128x128.f64");
    std::vector<double> back;
    const hsize_t stored = roundtrip("f64_lossless", H5T_IEEE_F64LE, sdo, {128, 128}, {64, 100}, lossless, &back);
    CHECK(std::memcmp(back.data(), sdo.data(), sdo.size() * sizeof(double)) == 0);
    CHECK(stored < sdo.size() * sizeof(double));
}

TEST_CASE("progressive reading: a coarser target decodes within its bound, full restores the archive's", "[h5]") {
    const std::vector<float> t = read_shared_as<float>("echam5_t_17x96x192.f32");
    const std::vector<hsize_t> dims{17, 96, 192}, chunk{17, 48, 96};
    std::vector<float> back;
    roundtrip("progressive", H5T_IEEE_F32LE, t, dims, chunk, bounded(MANS_H5_ABS, 1e-5), &back);
    check_lossy(t, back, dims, chunk, MANS_H5_ABS, 1e-5, {});

    auto read_at = [&](const char* target, std::vector<float>* out) {
        REQUIRE(mans_h5_set_read_target(target) >= 0);
        Id file = open_file(temp_path("progressive"));
        out->assign(t.size(), 0);
        REQUIRE(read_dataset(file, "x", H5T_NATIVE_FLOAT, out->data()));
    };
    auto max_error = [&](const std::vector<float>& v) {
        double m = 0;
        for (std::size_t i = 0; i < t.size(); ++i) m = std::max(m, std::fabs(double(t[i]) - double(v[i])));
        return m;
    };
    std::vector<float> coarse, rel, finer, full;
    read_at("abs:0.5", &coarse);
    check_lossy(t, coarse, dims, chunk, MANS_H5_ABS, 0.5, {});
    CHECK(max_error(coarse) > 1e-3);  // really coarser than the archive
    read_at("rel:1e-2", &rel);
    check_lossy(t, rel, dims, chunk, MANS_H5_REL, 1e-2, {});
    read_at("abs:1e-9", &finer);  // finer than the archive: everything it has
    read_at("full", &full);
    CHECK(finer == back);
    CHECK(full == back);
    CHECK(mans_h5_set_read_target("abs:-1") < 0);
    CHECK(mans_h5_set_read_target("sideways") < 0);
    CHECK(error_stack_text().find("sideways") != std::string::npos);
    REQUIRE(mans_h5_set_read_target(nullptr) >= 0);
}

TEST_CASE("set_local depends only on type, chunk shape and fill value", "[h5]") {
    const std::string path = temp_path("set_local");
    Id file = create_file(path);
    std::vector<float> a(1000), b(1000);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i), b[i] = float(std::sin(double(i)) * 1e6);
    Id dcpl = chunked_dcpl({100}, bounded(MANS_H5_REL, 1e-4));
    REQUIRE(write_dataset(file, "a", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1000}, dcpl, a.data()));
    REQUIRE(write_dataset(file, "b", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1000}, dcpl, b.data()));
    std::vector<std::vector<unsigned>> cds;
    for (const char* name : {"a", "b"}) {
        Id dset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
        Id plist(H5Dget_create_plist(dset), H5Pclose);
        unsigned flags = 0, cd[32];
        size_t n = 32;
        REQUIRE(H5Pget_filter_by_id2(plist, MANS_H5_FILTER_ID, &flags, &n, cd, 0, nullptr, nullptr) >= 0);
        cds.emplace_back(cd, cd + n);
    }
    CHECK(cds[0] == cds[1]);
    REQUIRE(cds[0].size() == MANS_H5_CD_NVALUES);
    mans_h5_config c;
    const char* why = nullptr;
    REQUIRE(mans_h5_decode_config(cds[0].size(), cds[0].data(), &c, &why) == 0);
    CHECK(c.codec == MANS_H5_CODEC_PRISM);
    CHECK(c.rank == 1);
    CHECK(c.dims[0] == 100);
    CHECK(c.mode == MANS_H5_REL);
    CHECK(c.bound == 1e-4);
}

TEST_CASE("unusable datasets and bad cd_values fail at H5Dcreate with a clear HDF5 error", "[h5]") {
    REQUIRE(mans_h5_register() >= 0);
    Id file = create_file(temp_path("refuse"));
    Id space(H5Screate_simple(1, std::vector<hsize_t>{64}.data(), nullptr), H5Sclose);

    // A compound type is neither integer nor float.
    Id compound(H5Tcreate(H5T_COMPOUND, 8), H5Tclose);
    H5Tinsert(compound, "a", 0, H5T_NATIVE_INT);
    H5Tinsert(compound, "b", 4, H5T_NATIVE_FLOAT);
    Id dcpl = chunked_dcpl({16}, lossless);
    H5Eclear2(H5E_DEFAULT);
    Id d1(H5Dcreate2(file, "compound", compound, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
    CHECK_FALSE(d1.ok());
    CHECK(error_stack_text().find("integer, float and double") != std::string::npos);

    const std::vector<std::vector<unsigned>> bad = {
        {2, 0},                   // unknown user layout
        {1, 7},                   // unknown mode
        {1, 1},                   // a bound mode without its bound
        {1, 1, 0, 0},             // bound 0
        {1, 2, 0, 0x7ff00000u},   // bound +inf
        {1, 0, 5},                // lossless with extra words
        {MANS_H5_CD_TAG | 1, 1},  // a persisted form too short
    };
    for (const auto& cd : bad) {
        Id p(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
        const hsize_t chunk = 16;
        H5Pset_chunk(p, 1, &chunk);
        REQUIRE(H5Pset_filter(p, MANS_H5_FILTER_ID, H5Z_FLAG_MANDATORY, cd.size(), cd.data()) >= 0);
        H5Eclear2(H5E_DEFAULT);
        Id d(H5Dcreate2(file, "bad", H5T_IEEE_F32LE, space, H5P_DEFAULT, p, H5P_DEFAULT), H5Dclose);
        INFO("cd_values[0..1] = " << cd[0] << ", " << cd[1]);
        CHECK_FALSE(d.ok());
        CHECK(error_stack_text().find("cd_values") != std::string::npos);
    }
    CHECK(mans_h5_set_error_bound(dcpl, MANS_H5_LOSSLESS, 1.0) < 0);
    CHECK(mans_h5_set_error_bound(dcpl, MANS_H5_ABS, -1.0) < 0);
}

TEST_CASE("hostile stored chunks are read errors, never crashes or wrong data", "[h5]") {
    const std::vector<float> t = read_shared_as<float>("echam5_t_17x96x192.f32");
    const std::vector<std::uint16_t> e = read_shared_as<std::uint16_t>("exafel_1024kB.u16");
    const std::string path = temp_path("hostile");
    {
        Id file = create_file(path);
        Id fd = chunked_dcpl({17, 48, 96}, bounded(MANS_H5_ABS, 1e-3));
        REQUIRE(write_dataset(file, "f", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {17, 96, 192}, fd, t.data()));
        Id id = chunked_dcpl({256, 512}, lossless);
        REQUIRE(write_dataset(file, "u", H5T_STD_U16LE, H5T_NATIVE_UINT16, {1024, 512}, id, e.data()));
    }
    struct Case {
        const char* dset;
        std::vector<hsize_t> offset;
        std::size_t raw;
    };
    const Case cases[] = {{"f", {0, 0, 0}, 17 * 48 * 96 * 4}, {"u", {0, 0}, 256 * 512 * 2}};
    std::mt19937 rng(3);
    std::size_t tried = 0;
    for (const Case& c : cases) {
        // The good chunk, as stored.
        std::vector<unsigned char> good;
        {
            Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
            Id dset(H5Dopen2(file, c.dset, H5P_DEFAULT), H5Dclose);
            hsize_t size = 0;
            REQUIRE(H5Dget_chunk_storage_size(dset, c.offset.data(), &size) >= 0);
            good.resize(size);
            uint32_t mask = 0;
            REQUIRE(H5Dread_chunk(dset, H5P_DEFAULT, c.offset.data(), &mask, good.data()) >= 0);
            REQUIRE(size < c.raw);  // a stream, not a raw chunk
        }
        std::vector<std::vector<unsigned char>> variants;
        variants.emplace_back(good.begin(), good.begin() + 5);               // too short for a header
        for (std::size_t cut : {std::size_t{6}, good.size() / 3, good.size() - 1}) variants.emplace_back(good.begin(), good.begin() + cut);
        variants.push_back(good), variants.back().push_back(0);              // trailing byte
        for (int k = 0; k < 40; ++k) {                                       // one byte changed
            variants.push_back(good);
            variants.back()[rng() % good.size()] ^= static_cast<unsigned char>(1 + rng() % 255);
        }
        std::vector<unsigned char> junk(c.raw - 1);
        for (auto& b : junk) b = static_cast<unsigned char>(rng());
        variants.push_back(junk);                                            // not a stream
        junk.resize(good.size());
        std::memcpy(junk.data(), "MANS", 4);
        variants.push_back(junk);                                            // magic, then junk
        for (const auto& v : variants) {
            {
                Id file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
                Id dset(H5Dopen2(file, c.dset, H5P_DEFAULT), H5Dclose);
                REQUIRE(H5Dwrite_chunk(dset, H5P_DEFAULT, 0, c.offset.data(), v.size(), v.data()) >= 0);
            }
            Id file = open_file(path);
            Id dset(H5Dopen2(file, c.dset, H5P_DEFAULT), H5Dclose);
            std::vector<unsigned char> out(c.dset[0] == 'f' ? t.size() * 4 : e.size() * 2);
            H5Eclear2(H5E_DEFAULT);
            const herr_t r = H5Dread(dset, c.dset[0] == 'f' ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL,
                                     H5P_DEFAULT, out.data());
            ++tried;
            // A changed byte the checksums catch is an error; the only success
            // allowed is one whose data is right (bit-exact / within bound).
            if (r >= 0) {
                if (c.dset[0] == 'u') {
                    CHECK(std::memcmp(out.data(), e.data(), out.size()) == 0);
                } else {
                    std::vector<float> f(t.size());
                    std::memcpy(f.data(), out.data(), out.size());
                    check_lossy(t, f, {17, 96, 192}, {17, 48, 96}, MANS_H5_ABS, 1e-3, {});
                }
            } else {
                CHECK(error_stack_text().find("decode") != std::string::npos);
            }
        }
        // Put the good chunk back: the dataset reads again.
        Id file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
        Id dset(H5Dopen2(file, c.dset, H5P_DEFAULT), H5Dclose);
        REQUIRE(H5Dwrite_chunk(dset, H5P_DEFAULT, 0, c.offset.data(), good.size(), good.data()) >= 0);
    }
    WARN(tried << " hostile chunks read");
}

TEST_CASE("chunk codec: user cd_values, persisted layout and read targets", "[h5][unit]") {
    uint32_t mode = 9;
    double bound = -1;
    const char* why = nullptr;
    CHECK(mans_h5_parse_user_values(0, nullptr, &mode, &bound, &why) == 0);
    CHECK(mode == MANS_H5_LOSSLESS);
    unsigned cd[4];
    REQUIRE(mans_h5_user_cd_values(MANS_H5_REL, 2.5e-4, cd) == 4);
    CHECK(mans_h5_parse_user_values(4, cd, &mode, &bound, &why) == 0);
    CHECK(mode == MANS_H5_REL);
    CHECK(bound == 2.5e-4);
    CHECK(mans_h5_unpack_double(cd[2], cd[3]) == 2.5e-4);
    REQUIRE(mans_h5_user_cd_values(MANS_H5_LOSSLESS, 0, cd) == 2);

    mans_h5_config c{};
    c.codec = MANS_H5_CODEC_PRISM, c.dtype = 8, c.element_size = 4, c.flags = MANS_H5_FLAG_FILL, c.rank = 3;
    c.dims[0] = 7, c.dims[1] = 64, c.dims[2] = 100;
    c.mode = MANS_H5_ABS, c.bound = 0.125, c.fill = -1e10;
    unsigned p[MANS_H5_CD_NVALUES];
    mans_h5_encode_config(&c, p);
    mans_h5_config d{};
    REQUIRE(mans_h5_decode_config(MANS_H5_CD_NVALUES, p, &d, &why) == 0);
    CHECK(std::memcmp(&c.dims, &d.dims, sizeof c.dims) == 0);
    CHECK((d.codec == c.codec && d.dtype == c.dtype && d.bound == c.bound && d.fill == c.fill && d.flags == c.flags));
    CHECK(mans_h5_chunk_bytes(&d) == 7 * 64 * 100 * 4);
    // A persisted form given back to set_local (h5repack copying a filter) keeps its user part.
    CHECK(mans_h5_parse_user_values(MANS_H5_CD_NVALUES, p, &mode, &bound, &why) == 0);
    CHECK((mode == MANS_H5_ABS && bound == 0.125));

    // Every single-word change either still decodes to a valid config or is refused.
    std::size_t refused = 0;
    for (unsigned i = 0; i < MANS_H5_CD_NVALUES; ++i) {
        for (unsigned v : {0u, 1u, 2u, 5u, 9u, 0xffffu, 0x7ff00000u, 0xffffffffu}) {
            unsigned q[MANS_H5_CD_NVALUES];
            std::memcpy(q, p, sizeof q);
            q[i] = v;
            mans_h5_config e{};
            if (mans_h5_decode_config(MANS_H5_CD_NVALUES, q, &e, &why) != 0) {
                ++refused;
                CHECK(why != nullptr);
            } else {
                CHECK(mans_h5_chunk_bytes(&e) > 0);
            }
        }
    }
    CHECK(refused > 40);
    p[9] = 5;  // a dimension word beyond rank 3 must stay 0
    CHECK(mans_h5_decode_config(MANS_H5_CD_NVALUES, p, &d, &why) != 0);
    p[9] = 0;
    CHECK(mans_h5_decode_config(MANS_H5_CD_NVALUES - 1, p, &d, &why) != 0);
    p[6] = p[7] = 1u << 20;  // 4 GiB+ chunk
    CHECK(mans_h5_decode_config(MANS_H5_CD_NVALUES, p, &d, &why) != 0);

    mans_h5_read_target t;
    CHECK((mans_h5_parse_read_target("full", &t) == 0 && t.kind == 4));
    CHECK((mans_h5_parse_read_target("", &t) == 0 && t.kind == 4));
    CHECK((mans_h5_parse_read_target("abs:0.5", &t) == 0 && t.kind == 0 && t.value == 0.5));
    CHECK((mans_h5_parse_read_target("rel:1e-3", &t) == 0 && t.kind == 1));
    CHECK((mans_h5_parse_read_target("psnr:60", &t) == 0 && t.kind == 2));
    CHECK((mans_h5_parse_read_target("bytes:4096", &t) == 0 && t.kind == 3));
    for (const char* bad : {"abs:", "abs:x", "abs:-1", "abs:1e999", "rel:nan", "abs 1", "ABS:1", "psnr:60dB"})
        CHECK(mans_h5_parse_read_target(bad, &t) != 0);
}

TEST_CASE("the filter must come first and once; optional use skips what it cannot take", "[h5]") {
    REQUIRE(mans_h5_register() >= 0);
    Id file = create_file(temp_path("pipeline"));
    const std::vector<hsize_t> dims{1000}, chunk{250};
    std::vector<float> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.01 * double(i)));
    // Shuffle (or deflate, fletcher32) before the filter would hand PRISM
    // rearranged bytes or a different size: refused at H5Dcreate.
    for (int before : {0, 1, 2}) {
        Id dcpl = chunked_dcpl(chunk, nullptr);
        if (before == 0) H5Pset_shuffle(dcpl);
        if (before == 1) H5Pset_deflate(dcpl, 1);
        if (before == 2) H5Pset_fletcher32(dcpl);
        REQUIRE(mans_h5_set_error_bound(dcpl, MANS_H5_ABS, 1e-3) >= 0);
        H5Eclear2(H5E_DEFAULT);
        INFO("filter before mans: " << before);
        CHECK_FALSE(write_dataset(file, ("before" + std::to_string(before)).c_str(), H5T_IEEE_F32LE,
                                  H5T_NATIVE_FLOAT, dims, dcpl, v.data()));
        CHECK(last_error().find("first filter") != std::string::npos);
    }
    // After it, they are fine.
    {
        Id dcpl = chunked_dcpl(chunk, bounded(MANS_H5_ABS, 1e-3));
        H5Pset_fletcher32(dcpl);
        REQUIRE(write_dataset(file, "after", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, dcpl, v.data()));
        std::vector<float> back(v.size());
        REQUIRE(read_dataset(file, "after", H5T_NATIVE_FLOAT, back.data()));
        check_lossy(v, back, dims, chunk, MANS_H5_ABS, 1e-3, {});
    }
    // A second setter call changes the settings; it does not add the filter twice.
    {
        Id dcpl = chunked_dcpl(chunk, lossless);
        REQUIRE(mans_h5_set_error_bound(dcpl, MANS_H5_ABS, 0.05) >= 0);
        CHECK(H5Pget_nfilters(dcpl) == 1);
        REQUIRE(write_dataset(file, "twice", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, dcpl, v.data()));
        std::vector<float> back(v.size());
        REQUIRE(read_dataset(file, "twice", H5T_NATIVE_FLOAT, back.data()));
        check_lossy(v, back, dims, chunk, MANS_H5_ABS, 0.05, {});
        CHECK(back != v);  // really the lossy mode of the second call
    }
    // Optional: a compound dataset is created and stored without the filter.
    {
        Id compound(H5Tcreate(H5T_COMPOUND, 8), H5Tclose);
        H5Tinsert(compound, "a", 0, H5T_NATIVE_INT);
        H5Tinsert(compound, "b", 4, H5T_NATIVE_FLOAT);
        Id dcpl = chunked_dcpl(chunk, nullptr);
        const unsigned cd[2] = {1, 0};
        REQUIRE(H5Pset_filter(dcpl, MANS_H5_FILTER_ID, H5Z_FLAG_OPTIONAL, 2, cd) >= 0);
        std::vector<std::uint64_t> rec(1000);
        for (std::size_t i = 0; i < rec.size(); ++i) rec[i] = i * 0x100000001ull;
        INFO(error_stack_text());
        REQUIRE(write_dataset(file, "optional_compound", compound, compound, dims, dcpl, rec.data()));
        std::vector<std::uint64_t> back(rec.size());
        REQUIRE(read_dataset(file, "optional_compound", compound, back.data()));
        CHECK(back == rec);
        // ... and an optional filter on a float dataset still compresses it.
        Id fdcpl = chunked_dcpl(chunk, nullptr);
        unsigned fcd[4];
        REQUIRE(H5Pset_filter(fdcpl, MANS_H5_FILTER_ID, H5Z_FLAG_OPTIONAL,
                              mans_h5_user_cd_values(MANS_H5_ABS, 1e-3, fcd), fcd) >= 0);
        REQUIRE(write_dataset(file, "optional_float", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, fdcpl, v.data()));
        Id mdcpl = chunked_dcpl(chunk, bounded(MANS_H5_ABS, 1e-3));
        REQUIRE(write_dataset(file, "mandatory_float", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, mdcpl, v.data()));
        Id opt(H5Dopen2(file, "optional_float", H5P_DEFAULT), H5Dclose);
        Id man(H5Dopen2(file, "mandatory_float", H5P_DEFAULT), H5Dclose);
        CHECK(H5Dget_storage_size(opt) == H5Dget_storage_size(man));
    }
}

TEST_CASE("non-IEEE floats are refused; NaN fills, f64 big-endian and huge values work", "[h5]") {
    REQUIRE(mans_h5_register() >= 0);
    Id file = create_file(temp_path("types"));
    const std::vector<hsize_t> dims{600}, chunk{256};  // a partial edge chunk
    Id odd(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
    H5Tset_ebias(odd, 117);  // IEEE field positions, another exponent bias
    std::vector<float> v(600);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 20.0f + static_cast<float>(std::cos(0.03 * double(i)));
    {
        Id dcpl = chunked_dcpl(chunk, bounded(MANS_H5_ABS, 1e-4));
        H5Eclear2(H5E_DEFAULT);
        CHECK_FALSE(write_dataset(file, "odd", odd, H5T_NATIVE_FLOAT, dims, dcpl, v.data()));
        CHECK(last_error().find("IEEE-754") != std::string::npos);
    }
    // A NaN fill value (h5py and netCDF use it) is kept exactly like any NaN.
    // (Chunks of 16K values: a PRISM archive has about 1 KB of header.)
    const std::vector<hsize_t> ndims{40000}, nchunk{16384};
    std::vector<float> with_nan(40000);
    for (std::size_t i = 0; i < with_nan.size(); ++i)
        with_nan[i] = i % 7 ? 20.0f + static_cast<float>(std::cos(0.003 * double(i))) : NAN;
    for (mans_h5_mode mode : {MANS_H5_ABS, MANS_H5_REL}) {
        std::vector<float> back;
        const hsize_t stored = roundtrip("nan_fill", H5T_IEEE_F32LE, with_nan, ndims, nchunk, bounded(mode, 1e-3),
                                         &back, std::numeric_limits<double>::quiet_NaN());
        check_lossy(with_nan, back, ndims, nchunk, mode, 1e-3, {});
        CHECK(stored < with_nan.size() * sizeof(float) / 2);  // compressed, not stored raw
    }
    // f64, big-endian, through PRISM.
    const std::vector<double> sdo = read_shared_as<double>("sdo_aia171_128x128.f64");
    std::vector<double> back;
    roundtrip("f64be", H5T_IEEE_F64BE, sdo, {128, 128}, {50, 60}, bounded(MANS_H5_REL, 1e-4), &back);
    check_lossy(sdo, back, {128, 128}, {50, 60}, MANS_H5_REL, 1e-4, {});
    // Values near DBL_MAX: whatever the codec can do, the data comes back within bound.
    std::vector<double> huge(600, 0.0);
    for (std::size_t i = 0; i < huge.size(); i += 5) huge[i] = (i % 2 ? 1 : -1) * 1.7e308 * (0.5 + 0.5 * std::sin(double(i)));
    huge[1] = NAN;
    for (mans_h5_mode mode : {MANS_H5_ABS, MANS_H5_REL}) {
        std::vector<double> hb;
        roundtrip("huge", H5T_IEEE_F64LE, huge, dims, chunk, bounded(mode, 1e-3), &hb);
        check_lossy(huge, hb, dims, chunk, mode, 1e-3, {});
    }
}

TEST_CASE("a coarse read target never writes coarse data back; tiny byte budgets read the coarsest", "[h5]") {
    const std::vector<float> t = read_shared_as<float>("echam5_t_17x96x192.f32");
    const std::vector<hsize_t> dims{17, 96, 192}, chunk{17, 48, 96};
    std::vector<float> back;
    roundtrip("coarse_write", H5T_IEEE_F32LE, t, dims, chunk, bounded(MANS_H5_ABS, 1e-5), &back);
    REQUIRE(mans_h5_set_read_target("abs:1") >= 0);
    {
        Id file(H5Fopen(temp_path("coarse_write").c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
        Id dset(H5Dopen2(file, "x", H5P_DEFAULT), H5Dclose);
        const hsize_t one = 1, at[3] = {0, 0, 0}, count[3] = {1, 1, 1};
        Id fspace(H5Dget_space(dset), H5Sclose);
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, at, nullptr, count, nullptr);
        Id mspace(H5Screate_simple(1, &one, nullptr), H5Sclose);
        const float x = 250.0f;
        H5Eclear2(H5E_DEFAULT);
        const herr_t w = H5Dwrite(dset, H5T_NATIVE_FLOAT, mspace, fspace, H5P_DEFAULT, &x);
        const herr_t f = H5Dflush(dset);
        CHECK((w < 0 || f < 0));  // refused, not re-encoded from coarse values
        CHECK(error_stack_text().find("coarse read target") != std::string::npos);
    }
    REQUIRE(mans_h5_set_read_target("bytes:1") >= 0);  // below any chunk's minimum: the coarsest retrieval
    {
        Id file = open_file(temp_path("coarse_write"));
        std::vector<float> coarse(t.size());
        INFO(error_stack_text());
        CHECK(read_dataset(file, "x", H5T_NATIVE_FLOAT, coarse.data()));
    }
    REQUIRE(mans_h5_set_read_target("full") >= 0);
    Id file = open_file(temp_path("coarse_write"));
    std::vector<float> again(t.size());
    REQUIRE(read_dataset(file, "x", H5T_NATIVE_FLOAT, again.data()));
    std::vector<float> expect = back;
    CHECK((again == expect || (again[0] == 250.0f && std::equal(again.begin() + 1, again.end(), expect.begin() + 1))));
    REQUIRE(mans_h5_set_read_target(nullptr) >= 0);
}
