// mans-quantgen: make SZ-style quantization codes from a raw float32 field.
//
//   mans-quantgen IN.f32 DIMS OUT --rel 1e-3 [--u32] [--fill-abs 1e10]
//
// IN    raw little-endian float32 array, C order
// DIMS  slowest to fastest, e.g. 17x96x192 (1D, 2D or 3D; leading 1s of a
//       longer list are dropped, so 1x1x90x180 is 2D 90x180)
// OUT   raw little-endian uint16 codes (uint32 with --u32), one per value
//
// Method (SZ 1.4/2.x style, deterministic, single pass):
//   * "fill" = non-finite or |v| >= 1e10 (Levitus -1e10, Ferret -1e34, netCDF
//     default 9.97e36, CMIP 1e20; change with --fill-abs T). Note: a 1e20
//     threshold would miss the Levitus land value -1e10.
//     A fill point gets code 0 and is reconstructed exactly as itself.
//   * range = max - min over the non-fill values, eb = rel * range.
//   * prediction = Lorenzo predictor (3D: 7 neighbours, 2D: 3, 1D: 1) on the
//     already RECONSTRUCTED values; neighbours outside the array count as 0.
//     Fill neighbours enter with their own (exact) value, as a decoder would
//     see them, so points next to a fill region usually become outliers.
//   * code = round((x - pred) / (2 eb)) + radius, radius = 32768 (u16) or
//     2^31 (u32). If the code is outside [1, 2 radius - 1], or the float32
//     reconstruction pred + 2 eb (code - radius) misses x by more than eb,
//     the point is an unpredictable outlier: code 0, reconstruction = x.
//
// Prints one line: n, eb, outlier fraction, fraction of codes == radius.
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "mans-quantgen: %s\n", msg.c_str());
  std::exit(1);
}

void usage() {
  std::fprintf(stderr,
               "usage: mans-quantgen IN.f32 DIMS OUT --rel REL [--u32] [--fill-abs T]\n"
               "  DIMS slowest to fastest, e.g. 17x96x192 (1D, 2D or 3D)\n"
               "  values with |v| >= T (default 1e10) or non-finite are fill\n");
  std::exit(2);
}

std::vector<size_t> parse_dims(const std::string& s) {
  std::vector<size_t> d;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t x = s.find('x', pos);
    if (x == std::string::npos) x = s.size();
    std::string tok = s.substr(pos, x - pos);
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos)
      die("bad DIMS '" + s + "'");
    unsigned long long v = std::strtoull(tok.c_str(), nullptr, 10);
    if (v == 0) die("zero dimension in DIMS '" + s + "'");
    d.push_back(static_cast<size_t>(v));
    pos = x + 1;
  }
  while (d.size() > 1 && d.front() == 1 && d.size() > 3) d.erase(d.begin());
  if (d.size() > 3) die("DIMS must have 1 to 3 dimensions (after dropping leading 1s)");
  return d;
}

double g_fill_abs = 1e10;
inline bool is_fill(float v) { return !std::isfinite(v) || std::fabs(double(v)) >= g_fill_abs; }

inline float load_le_f32(const unsigned char* p) {
  uint32_t u = uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) |
               (uint32_t(p[3]) << 24);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  double rel = -1.0;
  bool u32 = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // The value after option `a`, which must be a positive number.
    auto positive_arg = [&](const char* what) {
      if (i + 1 >= argc) usage();
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(argv[++i], &end);
      if (errno || !end || *end || !(v > 0.0)) die(what);
      return v;
    };
    if (a == "--rel") {
      rel = positive_arg("bad --rel value");
    } else if (a == "--fill-abs") {
      g_fill_abs = positive_arg("bad --fill-abs value");
    } else if (a == "--u32") {
      u32 = true;
    } else if (a == "-h" || a == "--help") {
      usage();
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 3 || rel <= 0.0) usage();

  const std::vector<size_t> dims = parse_dims(pos[1]);
  size_t n = 1;
  for (size_t d : dims) n *= d;

  // read input
  std::ifstream in(pos[0], std::ios::binary);
  if (!in) die("cannot open " + pos[0]);
  std::vector<unsigned char> raw((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
  if (raw.size() != n * 4)
    die(pos[0] + ": size " + std::to_string(raw.size()) + " bytes, DIMS need " +
        std::to_string(n * 4));
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = load_le_f32(&raw[4 * i]);
  raw.clear();
  raw.shrink_to_fit();

  // value range over non-fill values
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    if (is_fill(x[i])) continue;
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  const double range = (hi >= lo) ? hi - lo : 0.0;
  const double eb = rel * range;
  const double twoeb = 2.0 * eb;
  const int64_t radius = u32 ? (int64_t(1) << 31) : (int64_t(1) << 15);
  const double qmax = double(radius - 1);  // |q| <= radius-1 <=> code in [1, 2r-1]

  // dims as nz x ny x nx
  size_t nz = 1, ny = 1, nx = 1;
  if (dims.size() == 1) nx = dims[0];
  if (dims.size() == 2) ny = dims[0], nx = dims[1];
  if (dims.size() == 3) nz = dims[0], ny = dims[1], nx = dims[2];
  const size_t sxy = nx * ny;

  std::vector<float> r(n);           // reconstructed values
  std::vector<uint32_t> code(n);
  size_t outliers = 0, fills = 0, at_radius = 0;

  for (size_t k = 0; k < nz; ++k) {
    for (size_t j = 0; j < ny; ++j) {
      const size_t row = k * sxy + j * nx;
      for (size_t i = 0; i < nx; ++i) {
        const size_t idx = row + i;
        const float v = x[idx];
        if (is_fill(v)) {
          r[idx] = v;
          code[idx] = 0;
          ++fills;
          ++outliers;
          continue;
        }
        // Lorenzo predictor on reconstructed values, zero padding
        auto R = [&](size_t dk, size_t dj, size_t di) -> double {
          if (k < dk || j < dj || i < di) return 0.0;
          return double(r[idx - dk * sxy - dj * nx - di]);
        };
        double pred;
        if (dims.size() == 3) {
          pred = R(0, 0, 1) + R(0, 1, 0) + R(1, 0, 0) - R(0, 1, 1) - R(1, 0, 1) -
                 R(1, 1, 0) + R(1, 1, 1);
        } else if (dims.size() == 2) {
          pred = R(0, 0, 1) + R(0, 1, 0) - R(0, 1, 1);
        } else {
          pred = R(0, 0, 1);
        }
        const double diff = double(v) - pred;
        bool ok = false;
        int64_t q = 0;
        if (twoeb > 0.0) {
          const double t = diff / twoeb;
          if (std::isfinite(t) && std::fabs(t) < qmax + 0.5) {
            q = static_cast<int64_t>(std::round(t));
            if (q >= -int64_t(qmax) && q <= int64_t(qmax)) {
              const float rec = static_cast<float>(pred + twoeb * double(q));
              if (std::fabs(double(rec) - double(v)) <= eb) {
                r[idx] = rec;
                ok = true;
              }
            }
          }
        } else if (diff == 0.0) {  // constant field: exact hits only
          q = 0;
          r[idx] = v;
          ok = true;
        }
        if (ok) {
          code[idx] = static_cast<uint32_t>(q + radius);
          if (q == 0) ++at_radius;
        } else {
          code[idx] = 0;
          r[idx] = v;
          ++outliers;
        }
      }
    }
  }

  // write little-endian codes
  const size_t w = u32 ? 4 : 2;
  std::vector<unsigned char> out(n * w);
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = code[i];
    out[w * i] = static_cast<unsigned char>(c & 0xff);
    out[w * i + 1] = static_cast<unsigned char>((c >> 8) & 0xff);
    if (u32) {
      out[w * i + 2] = static_cast<unsigned char>((c >> 16) & 0xff);
      out[w * i + 3] = static_cast<unsigned char>((c >> 24) & 0xff);
    }
  }
  std::ofstream os(pos[2], std::ios::binary | std::ios::trunc);
  if (!os) die("cannot create " + pos[2]);
  os.write(reinterpret_cast<const char*>(out.data()), std::streamsize(out.size()));
  os.close();
  if (!os) die("write failed: " + pos[2]);

  std::printf("n=%zu eb=%.9g outliers=%.6f (fill=%.6f) code==radius=%.6f\n", n, eb,
              n ? double(outliers) / double(n) : 0.0, n ? double(fills) / double(n) : 0.0,
              n ? double(at_radius) / double(n) : 0.0);
  return 0;
}
