// test_prism_corruption.cpp - damaged PRISM archives at bit level: single-bit
// flips, 0x00/0xFF byte overwrites and truncations of archives of real
// fields, each tried with a full retrieval and with a progressive chain
// (coarse, then refined twice, to full). Every step must be an error or a
// result within its bound, measured against the original: never silently
// wrong output.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mans/prism.hpp"
#include "test_support.hpp"

using namespace mans::prism;
using mans::Errc;
using mans_test::Bytes;

namespace {

// A crop of a real field (dims slowest first), small enough to sweep.
struct Crop {
    const char* file;
    FloatType type;
    unsigned rank;
    std::uint64_t full[3];   // the file's dims
    std::uint64_t begin[3];  // crop origin
    std::uint64_t dims[3];   // crop extent
    double rel_bound;
    PlaneCoding coding;
};

const Crop kCrops[] = {
    // smooth 3D temperature
    {"echam5_t_17x96x192.f32", FloatType::f32, 3, {17, 96, 192}, {0, 32, 64}, {6, 24, 48}, 1e-4,
     PlaneCoding::negabinary},
    // ocean temperature with land fill -1e10 (masked values in the base)
    {"levitus_temp_20x180x360.f32", FloatType::f32, 3, {20, 180, 360}, {0, 60, 100}, {4, 32, 64}, 1e-5,
     PlaneCoding::negabinary},
    // f64 solar image, sign-magnitude planes
    {"sdo_aia171_128x128.f64", FloatType::f64, 2, {128, 128, 0}, {32, 32, 0}, {48, 48, 0}, 1e-5,
     PlaneCoding::sign_magnitude},
};

Bytes load_crop(const Crop& c) {
    const std::string path = mans_test::find_data_file(c.file);
    if (path.empty()) return {};
    const Bytes all = mans_test::read_file(path);
    const std::size_t es = float_size(c.type);
    std::uint64_t n = 1, total = 1;
    for (unsigned a = 0; a < c.rank; ++a) n *= c.dims[a], total *= c.full[a];
    if (all.size() != total * es) return {};
    Bytes out(n * es);
    for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t rem = i, src = 0, stride = 1;
        for (unsigned a = c.rank; a-- > 0;) {
            src += (c.begin[a] + rem % c.dims[a]) * stride;
            rem /= c.dims[a];
            stride *= c.full[a];
        }
        std::memcpy(out.data() + i * es, all.data() + src * es, es);
    }
    return out;
}

// Outcomes of the retrieval steps tried on damaged archives.
struct Tally {
    std::size_t archives = 0, open_errors = 0;
    std::size_t step_errors = 0, step_ok = 0, wrong = 0;
    std::size_t complete_ok = 0;  // full or refined-to-full results of a damaged archive
};

class Sweep {
public:
    // archive: the intact archive, read here for its bounds (each damaged
    // copy is passed to the checks).
    Sweep(const Bytes& raw, const Bytes& archive) : raw_(raw) {
        Reader r;
        REQUIRE(Reader::open(memory_source(archive.data(), archive.size()), &r) == Errc::ok);
        info_ = r.info();
        const double range = info_.value_max - info_.value_min;
        REQUIRE(range > 0);
        coarse_ = 1e-2 * range;
        mid_ = 3e-1 * coarse_;
        // The intact archive reads less for the coarse steps: the sweep
        // covers damage in planes that a progressive retrieval skips.
        Retrieval x;
        REQUIRE(r.retrieve(Target::abs(coarse_), &x, 1) == Errc::ok);
        REQUIRE(check(x, coarse_));
        REQUIRE(x.stats().bytes_read < archive.size() * 3 / 4);
        REQUIRE(r.refine(&x, Target::abs(mid_), 1) == Errc::ok);
        REQUIRE(check(x, mid_));
        REQUIRE(r.refine(&x, Target::full(), 1) == Errc::ok);
        REQUIRE(check(x, info_.abs_bound));
    }

    // Tries a damaged archive; names what was done in failure messages.
    void run(const Bytes& damaged, const char* what, std::size_t pos, unsigned detail) {
        ++t_.archives;
        Reader r;
        if (Reader::open(memory_source(damaged.data(), damaged.size()), &r) != Errc::ok) {
            ++t_.open_errors;
            return;
        }
        Retrieval full;
        if (step(r.retrieve(Target::full(), &full, 1), full, info_.abs_bound, what, pos, detail, "full"))
            ++t_.complete_ok;
        Retrieval x;
        if (!step(r.retrieve(Target::abs(coarse_), &x, 1), x, coarse_, what, pos, detail, "coarse")) return;
        if (!step(r.refine(&x, Target::abs(mid_), 1), x, mid_, what, pos, detail, "refined")) return;
        if (step(r.refine(&x, Target::full(), 1), x, info_.abs_bound, what, pos, detail, "refined to full"))
            ++t_.complete_ok;
    }

    const Tally& tally() const { return t_; }

private:
    // True when x has the original's size, keeps every exactly stored value
    // and is within `bound` and within the bound it reports.
    bool check(const Retrieval& x, double bound) const {
        if (x.type() != info_.type || x.bytes() != raw_.size()) return false;
        Quality q;
        if (measure_quality(raw_.data(), x.data(), info_.type, x.count(), info_.fill_values, &q) != Errc::ok)
            return false;
        return q.mismatch_count == 0 && q.max_abs_error <= bound && q.max_abs_error <= x.stats().max_abs_error_bound;
    }

    // Counts one step; returns true when it succeeded (the chain goes on).
    bool step(Errc e, const Retrieval& x, double bound, const char* what, std::size_t pos, unsigned detail,
              const char* name) {
        if (e != Errc::ok) {
            ++t_.step_errors;
            return false;
        }
        if (check(x, bound)) {
            ++t_.step_ok;
            return true;
        }
        ++t_.wrong;
        FAIL_CHECK(what << " at byte " << pos << " (" << detail << "): " << name
                        << " retrieval succeeded with a result outside its bound " << bound);
        return true;
    }

    const Bytes& raw_;
    ArchiveInfo info_;
    double coarse_ = 0, mid_ = 0;
    Tally t_;
};

}  // namespace

TEST_CASE("prism: bit flips and byte overwrites of real-field archives give an error or a result within its bound",
          "[prism][corruption]") {
    std::size_t total = 0;
    for (const Crop& c : kCrops) {
        const Bytes raw = load_crop(c);
        if (raw.empty()) {
            WARN(c.file << " not found: skipped");
            continue;
        }
        CompressConfig cfg;
        cfg.type = c.type;
        cfg.rank = c.rank;
        for (unsigned a = 0; a < c.rank; ++a) cfg.dims[a] = c.dims[a];
        cfg.mode = ErrorMode::relative;
        cfg.error_bound = c.rel_bound;
        cfg.planes = c.coding;
        cfg.threads = 1;
        Bytes archive;
        REQUIRE(compress(raw.data(), raw.size(), cfg, &archive) == Errc::ok);
        INFO(c.file << " crop, archive " << archive.size() << " bytes");
        Sweep sweep(raw, archive);
        Reader intact;
        REQUIRE(Reader::open(memory_source(archive.data(), archive.size()), &intact) == Errc::ok);
        if (std::string(c.file).rfind("levitus", 0) == 0) CHECK(intact.info().masked_count > 0);
        // Every bit and every byte of the preamble, header, header checksum
        // and base segment; in the plane segments every 3rd bit (each byte,
        // at two or three bit positions that shift from byte to byte) and
        // every 2nd byte. The whole archive, every bit, took 54 s here.
        // Under ASan, every 19th bit and every 11th byte of the planes.
        const std::size_t meta = intact.info().header_bytes + intact.info().base_bytes;
        const std::size_t plane_bit_stride = mans_test::kAddressSanitized ? 19 : 3;
        const std::size_t plane_byte_stride = mans_test::kAddressSanitized ? 11 : 2;
        Bytes damaged = archive;
        for (std::size_t bit = 0; bit < archive.size() * 8; bit += bit < meta * 8 ? 1 : plane_bit_stride) {
            damaged[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
            sweep.run(damaged, "bit flip", bit / 8, static_cast<unsigned>(bit % 8));
            damaged[bit / 8] = archive[bit / 8];
        }
        for (std::size_t pos = 0; pos < archive.size(); pos += pos < meta ? 1 : plane_byte_stride) {
            for (std::uint8_t v : {std::uint8_t{0x00}, std::uint8_t{0xFF}}) {
                if (archive[pos] == v) continue;
                damaged[pos] = v;
                sweep.run(damaged, "byte overwrite", pos, v);
                damaged[pos] = archive[pos];
            }
        }
        // Every truncation (the archive's size is in its header: open refuses).
        for (std::size_t len = 0; len < archive.size(); ++len)
            sweep.run(Bytes(archive.begin(), archive.begin() + static_cast<std::ptrdiff_t>(len)), "truncation", len, 0);
        const Tally& t = sweep.tally();
        CHECK(t.wrong == 0);
        // Every byte is under a checksum or an exact-size rule: reading it all
        // always finds the damage, so partial results that succeed had it in
        // planes they did not read.
        CHECK(t.complete_ok == 0);
        CHECK(t.step_ok > 0);
        total += t.archives;
        std::printf("  prism corruption %-28s %6zu bytes (%zu header+base): %zu damaged archives, %zu refused at open, "
                    "%zu retrieval steps failed, %zu within bound (%zu complete), %zu wrong\n",
                    c.file, archive.size(), meta, t.archives, t.open_errors, t.step_errors, t.step_ok,
                    t.complete_ok, t.wrong);
    }
    std::printf("  prism corruption: %zu damaged archives tried\n", total);
}
