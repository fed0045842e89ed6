// Progressive lossy compression of a float grid with PRISM: compress once at
// a fine bound, retrieve coarsely, then refine by reading only the rest.
#include <mans/prism.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    const std::uint64_t nz = 32, ny = 64, nx = 64;
    std::vector<float> field(nz * ny * nx);
    for (std::size_t i = 0; i < field.size(); ++i)
        field[i] = 280.0f + 20.0f * std::sin(0.01f * static_cast<float>(i % 4096)) + 0.001f * (i % 17);

    namespace prism = mans::prism;
    prism::CompressConfig cfg;
    cfg.type = prism::FloatType::f32;
    cfg.rank = 3;
    cfg.dims[0] = nz, cfg.dims[1] = ny, cfg.dims[2] = nx;  // slowest first
    cfg.mode = prism::ErrorMode::relative;                 // x (max - min)
    cfg.error_bound = 1e-6;
    std::vector<std::uint8_t> archive;
    if (prism::compress(field.data(), field.size() * sizeof(float), cfg, &archive) != mans::Errc::ok) return 1;

    prism::Reader reader;
    if (prism::Reader::open(prism::memory_source(archive.data(), archive.size()), &reader) != mans::Errc::ok)
        return 1;
    prism::Retrieval x;
    if (reader.retrieve(prism::Target::rel(1e-2), &x) != mans::Errc::ok) return 1;
    std::printf("rel 1e-2: read %llu of %zu bytes, error <= %g\n",
                static_cast<unsigned long long>(x.stats().bytes_read), archive.size(),
                x.stats().max_abs_error_bound);
    if (reader.refine(&x, prism::Target::rel(1e-5)) != mans::Errc::ok) return 1;
    std::printf("rel 1e-5: read %llu more bytes, error <= %g\n",
                static_cast<unsigned long long>(x.stats().bytes_read_step), x.stats().max_abs_error_bound);

    double max_err = 0;  // check it against the original
    for (std::size_t i = 0; i < field.size(); ++i)
        max_err = std::fmax(max_err, std::fabs(static_cast<double>(field[i]) - x.as<float>()[i]));
    return max_err <= x.stats().max_abs_error_bound ? 0 : 2;
}
