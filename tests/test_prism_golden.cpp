// test_prism_golden.cpp - golden PRISM archives that pin the archive bytes
// and the decoded values (full and one coarse retrieval).
//
// tests/golden/prism_golden.tsv: name, raw bytes, XXH3 of the input, archive
// bytes, XXH3 of the archive, XXH3 of the full retrieval, XXH3 of the
// retrieval at the coarse bound. tests/golden/NAME.prism: the archive.
// MANS_REGEN_GOLDEN=1 rewrites them (see tests/golden/README.md).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "mans/prism.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace mans::prism;
using mans::Errc;
using mans_test::Bytes;
using mans_test::hex64;
using mans_test::xxh3;

namespace {

// Fixed generator (an LCG and integer arithmetic only), so the inputs are the
// same bytes on every platform.
struct Lcg {
    std::uint64_t s;
    std::uint32_t next() {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::uint32_t>(s >> 33);
    }
};

template <typename T>
Bytes field(std::uint64_t n, std::uint64_t row, std::uint64_t seed) {
    Bytes out(n * sizeof(T));
    Lcg rng{seed};
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t x = i % row, y = i / row;
        const double smooth = static_cast<double>((x * x + 3 * y * y + x * y) % 1009) / 10.0;
        const T v = static_cast<T>(smooth + (rng.next() % 1000) / 1000.0);
        std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
    }
    return out;
}

struct Case {
    std::string name;
    std::function<Bytes()> input;
    CompressConfig cfg;
    double coarse;  // absolute bound of the pinned coarse retrieval
};

std::vector<Case> cases() {
    std::vector<Case> out;
    {
        Case c{"prism_f32_3d_nan_fill", nullptr, {}, 1.0};
        c.cfg.type = FloatType::f32;
        c.cfg.rank = 3;
        c.cfg.dims[0] = 5, c.cfg.dims[1] = 13, c.cfg.dims[2] = 21;
        c.cfg.error_bound = 1e-3;
        c.input = [] {
            Bytes b = field<float>(5 * 13 * 21, 21, 1);
            const float nan = std::numeric_limits<float>::quiet_NaN(), fill = -1e10f;
            std::memcpy(b.data() + 4 * 17, &nan, 4);
            for (int i = 100; i < 160; ++i) std::memcpy(b.data() + 4 * i, &fill, 4);
            return b;
        };
        out.push_back(c);
    }
    {
        Case c{"prism_f64_2d_rel_signmag", nullptr, {}, 0.5};
        c.cfg.type = FloatType::f64;
        c.cfg.rank = 2;
        c.cfg.dims[0] = 31, c.cfg.dims[1] = 40;
        c.cfg.mode = ErrorMode::relative;
        c.cfg.error_bound = 1e-5;
        c.cfg.planes = PlaneCoding::sign_magnitude;
        c.input = [] { return field<double>(31 * 40, 40, 2); };
        out.push_back(c);
    }
    {
        Case c{"prism_f32_1d", nullptr, {}, 0.1};
        c.cfg.type = FloatType::f32;
        c.cfg.rank = 1;
        c.cfg.dims[0] = 3000;
        c.cfg.error_bound = 1e-4;
        c.input = [] { return field<float>(3000, 3000, 3); };
        out.push_back(c);
    }
    {
        Case c{"prism_f32_4d", nullptr, {}, 2.0};
        c.cfg.type = FloatType::f32;
        c.cfg.rank = 4;
        c.cfg.dims[0] = 3, c.cfg.dims[1] = 4, c.cfg.dims[2] = 9, c.cfg.dims[3] = 11;
        c.cfg.error_bound = 1e-2;
        c.input = [] { return field<float>(3 * 4 * 9 * 11, 11, 4); };
        out.push_back(c);
    }
    return out;
}

std::string path_of(const std::string& f) { return (fs::path(MANS_GOLDEN_DIR) / f).string(); }

// Hashes of the full and the coarse retrieval of an archive; "" on error.
std::pair<std::string, std::string> decode_hashes(const Bytes& archive, double coarse) {
    Reader r;
    if (Reader::open(memory_source(archive.data(), archive.size()), &r) != Errc::ok) return {};
    Retrieval full, part;
    if (r.retrieve(Target::full(), &full) != Errc::ok || r.retrieve(Target::abs(coarse), &part) != Errc::ok)
        return {};
    return {hex64(xxh3(full.data(), full.bytes())), hex64(xxh3(part.data(), part.bytes()))};
}

struct Row {
    std::uint64_t raw_bytes = 0, archive_bytes = 0;
    std::string raw_hash, archive_hash, full_hash, coarse_hash;
};

std::map<std::string, Row> read_rows() {
    std::map<std::string, Row> rows;
    std::ifstream f(path_of("prism_golden.tsv"));
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream s(line);
        std::string name;
        Row r;
        s >> name >> r.raw_bytes >> r.raw_hash >> r.archive_bytes >> r.archive_hash >> r.full_hash >> r.coarse_hash;
        if (s) rows[name] = r;
    }
    return rows;
}

}  // namespace

TEST_CASE("prism golden: regenerate on request (MANS_REGEN_GOLDEN=1)", "[golden][prism]") {
    const char* e = std::getenv("MANS_REGEN_GOLDEN");
    if (!e || std::string(e) != "1") return;
    std::ofstream tsv(path_of("prism_golden.tsv"), std::ios::trunc);
    tsv << "# Golden PRISM archives of tests/test_prism_golden.cpp (XXH3-64, hex). Regenerated with "
           "MANS_REGEN_GOLDEN=1.\n# name\traw_bytes\traw_xxh3\tarchive_bytes\tarchive_xxh3\tfull_xxh3\tcoarse_xxh3\n";
    for (const Case& c : cases()) {
        const Bytes raw = c.input();
        Bytes archive;
        REQUIRE(compress(raw.data(), raw.size(), c.cfg, &archive) == Errc::ok);
        REQUIRE(mans_test::write_file(path_of(c.name + ".prism"), archive));
        const auto h = decode_hashes(archive, c.coarse);
        tsv << c.name << '\t' << raw.size() << '\t' << hex64(xxh3(raw)) << '\t' << archive.size() << '\t'
            << hex64(xxh3(archive)) << '\t' << h.first << '\t' << h.second << '\n';
    }
    WARN("PRISM golden files regenerated");
}

TEST_CASE("prism golden: encoder and decoder reproduce the pinned bytes", "[golden][prism]") {
    const auto rows = read_rows();
    REQUIRE(rows.size() == cases().size());
    for (const Case& c : cases()) {
        INFO(c.name);
        const Row& row = rows.at(c.name);
        // Decoder: the committed archive decodes to the pinned values.
        const Bytes committed = mans_test::read_file(path_of(c.name + ".prism"));
        REQUIRE(committed.size() == row.archive_bytes);
        CHECK(hex64(xxh3(committed)) == row.archive_hash);
        const auto h = decode_hashes(committed, c.coarse);
        CHECK(h.first == row.full_hash);
        CHECK(h.second == row.coarse_hash);
        // Encoder: today's library writes the same bytes.
        const Bytes raw = c.input();
        REQUIRE(raw.size() == row.raw_bytes);
        CHECK(hex64(xxh3(raw)) == row.raw_hash);
        Bytes archive;
        REQUIRE(compress(raw.data(), raw.size(), c.cfg, &archive) == Errc::ok);
        CHECK(archive == committed);
    }
}
