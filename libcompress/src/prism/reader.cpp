// reader.cpp - sources, the Reader (header, base, planes on demand) and
// reconstruction of a Retrieval.
//
// A Retrieval keeps the plane bytes it has read (not their decoded codes):
// a refinement reads only the planes it adds and reconstructs from all of
// them, so its result is bit-identical to a one-shot retrieval of the same
// planes. A complete retrieval cannot be refined and keeps nothing.
// Reconstruction runs on the sweep (sweep.hpp), writing each row of the
// output once it is final: besides the output it holds N / 2^rank doubles,
// a ring of rows, two bits per point and the plane bytes.
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "backend.hpp"  // cpu_backend
#include "core/byte_io.hpp"
#include "core/frame.hpp"
#include "core/status.hpp"
#include "device_module.hpp"
#include "mans/prism.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/cpu_kernels.hpp"  // ElementKernels
#include "prism/device_job.hpp"  // retrieve_on_module
#include "prism/level_codes.hpp"
#include "prism/planner.hpp"
#include "prism/sweep.hpp"

namespace mans::prism {

using namespace mans::detail::prism;
using mans::detail::checksum32;
using mans::detail::load_le;

// ---------------------------------------------------------------- sources

namespace {

class MemorySource final : public Source {
public:
    MemorySource(const void* p, std::size_t n) : p_(static_cast<const std::uint8_t*>(p)), n_(n) {}
    std::uint64_t size() const noexcept override { return n_; }
    Errc read_at(std::uint64_t off, void* dst, std::size_t n) noexcept override {
        if (off > n_ || n > n_ - off) return Errc::truncated;
        if (n) std::memcpy(dst, p_ + off, n);
        return Errc::ok;
    }

private:
    const std::uint8_t* p_;
    std::size_t n_;
};

class FileSource final : public Source {
public:
    FileSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
    ~FileSource() override { ::close(fd_); }
    std::uint64_t size() const noexcept override { return size_; }
    Errc read_at(std::uint64_t off, void* dst, std::size_t n) noexcept override {
        if (off > size_ || n > size_ - off) return Errc::truncated;
        auto* p = static_cast<std::uint8_t*>(dst);
        while (n) {
            const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(off));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return got == 0 ? Errc::truncated : Errc::io;
            p += got, off += static_cast<std::uint64_t>(got), n -= static_cast<std::size_t>(got);
        }
        return Errc::ok;
    }

private:
    int fd_;
    std::uint64_t size_;
};

class CallbackSource final : public Source {
public:
    CallbackSource(std::uint64_t size, ReadAt fn) : size_(size), fn_(std::move(fn)) {}
    std::uint64_t size() const noexcept override { return size_; }
    Errc read_at(std::uint64_t off, void* dst, std::size_t n) noexcept override {
        if (off > size_ || n > size_ - off) return Errc::truncated;
        try {
            return fn_ && fn_(off, dst, n) ? Errc::ok : Errc::io;
        } catch (...) {
            return Errc::io;  // a throwing callback never crosses this API
        }
    }

private:
    std::uint64_t size_;
    ReadAt fn_;
};

}  // namespace

std::unique_ptr<Source> memory_source(const void* data, std::size_t size) {
    return std::make_unique<MemorySource>(data, size);
}

std::unique_ptr<Source> file_source(const std::string& path, Errc* status) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (status) *status = Errc::io;
        return nullptr;
    }
    const off_t end = ::lseek(fd, 0, SEEK_END);
    if (end < 0) {
        ::close(fd);
        if (status) *status = Errc::io;
        return nullptr;
    }
    if (status) *status = Errc::ok;
    return std::make_unique<FileSource>(fd, static_cast<std::uint64_t>(end));
}

std::unique_ptr<Source> callback_source(std::uint64_t size, ReadAt read_at) {
    return std::make_unique<CallbackSource>(size, std::move(read_at));
}

// ---------------------------------------------------------------- Retrieval

namespace {

// Leaves the bytes of resize() uninitialized: the output's pages become
// resident only as its rows are written (while the sweep's half-grid values
// are released), not all at once.
template <typename T>
struct DefaultInit : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = DefaultInit<U>;
    };
    template <typename U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... A>
    void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }
};
using OutBytes = std::vector<std::uint8_t, DefaultInit<std::uint8_t>>;

}  // namespace

struct Retrieval::State {
    FloatType type = FloatType::f32;
    std::uint64_t count = 0;
    OutBytes out;  // count values of type
    // Per level: the stored bytes of the planes read so far, in pieces of
    // consecutive planes (one per step); dropped once complete with the
    // values on the host (a device retrieval keeps them).
    struct Piece {
        unsigned first_plane = 0;
        std::vector<std::uint8_t> bytes;
    };
    std::vector<std::vector<Piece>> pieces;
    RetrievalStats stats;
    std::uint64_t owner = 0;  // id of the Reader that made it (ids are never reused)
};

Retrieval::Retrieval() = default;
Retrieval::~Retrieval() = default;
Retrieval::Retrieval(Retrieval&&) noexcept = default;
Retrieval& Retrieval::operator=(Retrieval&&) noexcept = default;

namespace {
const RetrievalStats kNoStats{};
}
FloatType Retrieval::type() const noexcept { return state_ ? state_->type : FloatType::f32; }
std::uint64_t Retrieval::count() const noexcept { return state_ ? state_->count : 0; }
const void* Retrieval::data() const noexcept { return state_ ? state_->out.data() : nullptr; }
std::size_t Retrieval::bytes() const noexcept { return state_ ? state_->out.size() : 0; }
const RetrievalStats& Retrieval::stats() const noexcept { return state_ ? state_->stats : kNoStats; }

// ---------------------------------------------------------------- Reader

namespace {
std::atomic<std::uint64_t> g_next_reader_id{1};
}

struct Reader::Impl {
    const std::uint64_t id = g_next_reader_id.fetch_add(1);
    std::unique_ptr<Source> src;
    Header h;
    ArchiveInfo info;
    ErrorModel model;
    bool base_loaded = false;
    BaseData base;
    std::uint64_t bytes_read = 0;
    std::vector<std::uint8_t> header_bytes;  // preamble + header + checksum, as stored (for a module)
    mans::Backend backend = mans::Backend::automatic;
    // The self-test's choice, past the selection: a module, or the CPU.
    bool direct = false;
    const mans_backend_module* direct_module = nullptr;
    // The device-memory API's destination during one of its calls: the
    // values go to device_out on direct_module's device, not to the host.
    void* device_out = nullptr;
    const char* used = "cpu";  // where the last reconstruction ran

    Errc read(std::uint64_t off, std::size_t n, std::vector<std::uint8_t>* buf) {
        buf->resize(n);
        MANS_RETURN_IF_ERROR(src->read_at(off, buf->data(), n));
        bytes_read += n;
        return Errc::ok;
    }
    // A Retrieval made by this reader, with the shapes this archive gives.
    bool owns(const Retrieval::State& s) const {
        if (s.owner != id || s.pieces.size() != h.levels || s.stats.planes.size() != h.levels) return false;
        if (s.stats.complete) return true;
        for (unsigned l = 0; l < h.levels; ++l) {
            std::uint64_t held = 0;
            for (const Retrieval::State::Piece& p : s.pieces[l]) held += p.bytes.size();
            if (s.stats.planes[l] > h.level[l].planes || held != h.plane_range_bytes(l, 0, s.stats.planes[l]))
                return false;
        }
        return true;
    }
    Errc load_base();
    Errc read_planes(unsigned l, unsigned b0, unsigned b1, std::vector<std::uint8_t>* buf);
    template <typename T>
    Errc reconstruct(const std::vector<std::vector<const std::uint8_t*>>& planes, OutBytes* out,
                     int threads);
    Errc run(const Target& target, Retrieval::State* s, bool fresh, int threads);
};

Errc Reader::Impl::load_base() {
    if (base_loaded) return Errc::ok;
    std::vector<std::uint8_t> buf;
    MANS_RETURN_IF_ERROR(read(h.header_bytes, static_cast<std::size_t>(h.base_bytes), &buf));
    if (checksum32(buf.data(), buf.size()) != h.base_checksum) return Errc::content_checksum;
    MANS_RETURN_IF_ERROR(decode_base(buf.data(), buf.size(), h, &base));
    base_loaded = true;
    return Errc::ok;
}

// Reads planes [b0, b1) of level l (one contiguous range) and verifies
// every plane's checksum before anything is decoded.
Errc Reader::Impl::read_planes(unsigned l, unsigned b0, unsigned b1, std::vector<std::uint8_t>* buf) {
    const std::uint64_t begin = h.plane_range_begin(l, b0);
    MANS_RETURN_IF_ERROR(read(begin, static_cast<std::size_t>(h.plane_range_bytes(l, b0, b1)), buf));
    for (unsigned b = b0; b < b1; ++b) {
        const std::uint64_t at = h.plane_range_begin(l, b) - begin;
        const std::size_t n = static_cast<std::size_t>(h.plane_range_bytes(l, b, b + 1));
        if (checksum32(buf->data() + at, n) != h.plane_checksum[h.level_first_plane[l] + b]) return Errc::content_checksum;
    }
    return Errc::ok;
}

namespace {

bool bit(const std::vector<std::uint8_t>& bits, std::uint64_t i) {
    return !bits.empty() && (bits[static_cast<std::size_t>(i >> 3)] >> (i & 7) & 1);
}

// The reader as the sweep's Ops: reconstructs each point from its code and
// writes final rows to the output.
template <typename T>
class Rebuild {
public:
    Rebuild(const Header& h, const BaseData& base, const std::vector<std::vector<const std::uint8_t*>>& planes,
            std::uint8_t* out, int threads)
        : h_(h), base_(base), planes_(planes), out_(out), threads_(threads) {
        outliers_.assign(static_cast<std::size_t>((h.grid.count + 7) / 8), 0);
        for (std::uint64_t p : base.outlier_index) outliers_[static_cast<std::size_t>(p >> 3)] |= 1u << (p & 7);
    }

    double anchor() const {
        return base_.anchor_value.empty() ? 0.0 : static_cast<double>(load_le<T>(base_.anchor_value.data()));
    }
    LevelForm begin_level(unsigned l) {
        const LevelMeta& m = h_.level[l];
        const unsigned kept = static_cast<unsigned>(planes_[l].size());
        codes_.reset(kept ? new LevelDecoder(h_, l, kept, planes_[l], static_cast<unsigned>(threads_)) : nullptr);
        step_ = m.step;
        return LevelForm{m.scheme, m.kinds, &base_.kind_bits[l]};
    }
    StepJobs begin_step(unsigned, const std::vector<CodeRange>& r) { return codes_ ? codes_->prepare(r) : StepJobs{}; }
    void job(std::size_t j) { codes_->job(j); }
    double visit(unsigned, std::uint64_t idx, std::uint64_t code, double pred) const {
        const bool outlier = bit(outliers_, idx), masked = bit(base_.mask_bits, idx);
        const double q =
            codes_ && !outlier && !masked ? static_cast<double>(decode_word(codes_->word(code), h_.coding)) : 0.0;
        return decode_point(outlier, outlier ? outlier_value(idx) : 0.0, masked, pred, step_, q);
    }
    // visit for each point of the run. A run without outliers or masked
    // points (nearly all) whose codes lie in one chunk reconstructs straight
    // from the chunk's words, with the coding chosen once: the same
    // arithmetic as visit, without its per-point tests.
    void visit_run(unsigned l, std::uint64_t first, std::uint64_t di, std::uint64_t code, std::uint64_t m,
                   const double* pred, double* work) const {
        const std::uint32_t* words = codes_ ? codes_->words(code, m) : nullptr;
        bool special = false;
        for (std::uint64_t i = 0; i < m && words; ++i)
            special |= bit(outliers_, first + i * di) || bit(base_.mask_bits, first + i * di);
        if (!words || special) {
            for (std::uint64_t i = 0; i < m; ++i) work[i * di] = visit(l, first + i * di, code + i, pred[i]);
            return;
        }
        const auto rebuild = [&](Coding c) {  // inlined with c a constant: one loop per coding
            for (std::uint64_t i = 0; i < m; ++i)
                work[i * di] = reconstruct_point(pred[i], step_, static_cast<double>(decode_word(words[i], c)));
        };
        if (h_.coding == Coding::negabinary)
            rebuild(Coding::negabinary);
        else
            rebuild(Coding::sign_magnitude);
    }
    Errc end_step(unsigned, const std::vector<CodeRange>& r) { return codes_ ? codes_->commit(r) : Errc::ok; }
    Errc end_level(unsigned) {
        codes_.reset();
        return Errc::ok;
    }
    void rows_done(std::uint64_t r0, std::uint64_t r1, const RowRing& ring) {
        const std::uint64_t R = ring.R;
        const std::int64_t rows = static_cast<std::int64_t>(r1 - r0);
        const auto to_elements = mans::detail::cpu_backend().prism_kernels().to_elements.template of<T>();
#pragma omp parallel for num_threads(threads_) schedule(static)
        for (std::int64_t i = 0; i < rows; ++i) {
            const std::uint64_t t = r0 + static_cast<std::uint64_t>(i);
            to_elements(ring.row(t), R, out_ + t * R * sizeof(T));
        }
    }

private:
    double outlier_value(std::uint64_t idx) const {
        const auto& ix = base_.outlier_index;
        const std::size_t i = static_cast<std::size_t>(std::lower_bound(ix.begin(), ix.end(), idx) - ix.begin());
        return static_cast<double>(load_le<T>(base_.outlier_values.data() + i * sizeof(T)));
    }

    const Header& h_;
    const BaseData& base_;
    const std::vector<std::vector<const std::uint8_t*>>& planes_;
    std::uint8_t* out_;
    int threads_;
    std::vector<std::uint8_t> outliers_;  // bit per point
    std::unique_ptr<LevelDecoder> codes_;  // of the level being swept
    double step_ = 0;
};

}  // namespace

// planes[l][b]: the stored bytes of plane b of level l, for the planes read.
template <typename T>
Errc Reader::Impl::reconstruct(const std::vector<std::vector<const std::uint8_t*>>& planes,
                               OutBytes* out_bytes, int threads) {
    const std::uint64_t n = h.grid.count;
    if (device_out) {  // no host values, and no fallback: the caller's device memory
        used = direct_module->name;
        out_bytes->clear();
        return retrieve_on_module(*direct_module, header_bytes, h, base, planes, device_out, true);
    }
    out_bytes->resize(static_cast<std::size_t>(n * sizeof(T)));
    std::uint8_t* out = out_bytes->data();
    const mans_backend_module* gpu = direct_module;
    if (!direct)
        MANS_RETURN_IF_ERROR(mans::detail::select_module(backend, mans::detail::BackendOp::prism_decompress,
                                                         n * sizeof(T), &gpu));
    if (gpu) {
        const Errc e = retrieve_on_module(*gpu, header_bytes, h, base, planes, out);
        // `automatic` leaves a module's failure to the CPU, which returns
        // the same values (or refuses the same planes).
        if (e == Errc::ok || direct || backend != mans::Backend::automatic) {
            used = gpu->name;
            return e;
        }
    }
    used = "cpu";
    {
        Rebuild<T> ops(h, base, planes, out, threads);
        MANS_RETURN_IF_ERROR(Sweep<Rebuild<T>>(h.grid, h.levels, threads, ops).run());
    }
    // Exactly kept values: masked (in point order), outliers, the anchor.
    std::size_t mi = 0;
    if (!base.mask_bits.empty())
        for (std::uint64_t i = 0; i < n; ++i)
            if (bit(base.mask_bits, i)) std::memcpy(out + i * sizeof(T), base.masked_values.data() + sizeof(T) * mi++, sizeof(T));
    for (std::size_t i = 0; i < base.outlier_index.size(); ++i)
        std::memcpy(out + base.outlier_index[i] * sizeof(T), base.outlier_values.data() + i * sizeof(T), sizeof(T));
    if (n && !base.anchor_value.empty()) std::memcpy(out, base.anchor_value.data(), sizeof(T));
    return Errc::ok;
}

// *s changes only when every step succeeded (a failed refinement leaves it as it was).
Errc Reader::Impl::run(const Target& target, Retrieval::State* s, bool fresh, int threads) {
    std::vector<std::uint32_t> prev(h.levels, 0);
    if (!fresh) prev = s->stats.planes;
    const std::uint64_t fixed = fresh ? h.header_bytes + h.base_bytes : 0;
    Plan plan;
    MANS_RETURN_IF_ERROR(make_plan(h, model, target, prev, fixed, &plan));
    const std::uint64_t before = bytes_read;
    MANS_RETURN_IF_ERROR(load_base());
    // The planes held: all of prev's, unless a complete retrieval dropped
    // them and must reconstruct again (into device memory): then it reads
    // them again.
    std::vector<std::uint32_t> held = prev;
    if (!fresh && device_out && s->stats.complete) {
        bool any = false;
        for (const auto& p : s->pieces) any = any || !p.empty();
        if (!any) held.assign(h.levels, 0);
    }
    // The planes this step adds, read and verified.
    std::vector<Retrieval::State::Piece> added(h.levels);
    std::uint64_t plane_bytes = 0;
    // Reconstruct also when no plane is added but the values are wanted
    // elsewhere: in device memory, or on the host after a device retrieval
    // (which keeps none there).
    bool changed = fresh || device_out || s->out.size() != h.grid.count * h.esize();
    for (unsigned l = 0; l < h.levels; ++l) {
        if (plan.planes[l] <= held[l]) continue;
        added[l].first_plane = held[l];
        MANS_RETURN_IF_ERROR(read_planes(l, held[l], plan.planes[l], &added[l].bytes));
        plane_bytes += added[l].bytes.size();
        changed = true;
    }
    if (changed) {
        std::vector<std::vector<const std::uint8_t*>> planes(h.levels);
        for (unsigned l = 0; l < h.levels; ++l) {
            auto add = [&](const Retrieval::State::Piece& p, unsigned end) {
                for (unsigned b = p.first_plane; b < end; ++b)
                    planes[l].push_back(p.bytes.data() + (h.plane_range_begin(l, b) - h.plane_range_begin(l, p.first_plane)));
            };
            if (!fresh)
                for (std::size_t i = 0; i < s->pieces[l].size(); ++i) {
                    const auto& p = s->pieces[l][i];
                    add(p, i + 1 < s->pieces[l].size() ? s->pieces[l][i + 1].first_plane : held[l]);
                }
            if (plan.planes[l] > held[l]) add(added[l], plan.planes[l]);
        }
        OutBytes out;
        MANS_RETURN_IF_ERROR(h.type == FloatType::f32 ? reconstruct<float>(planes, &out, threads)
                                                      : reconstruct<double>(planes, &out, threads));
        s->out.swap(out);
    }
    if (fresh) {
        s->type = h.type;
        s->count = h.grid.count;
        s->pieces.assign(h.levels, {});
        s->owner = id;
        s->stats = RetrievalStats{};
        s->stats.bytes_read = h.header_bytes + h.base_bytes;
    }
    for (unsigned l = 0; l < h.levels; ++l)
        if (!added[l].bytes.empty() || plan.planes[l] > held[l]) s->pieces[l].push_back(std::move(added[l]));
    if (plan.complete && !device_out)  // nothing left to refine, and the values are here
        for (auto& p : s->pieces) std::vector<Retrieval::State::Piece>().swap(p);
    s->stats.bytes_read += plane_bytes;
    s->stats.planes = plan.planes;
    s->stats.bytes_read_step = bytes_read - before;
    s->stats.max_abs_error_bound = plan.max_abs_error_bound;
    s->stats.psnr_estimate = plan.psnr_estimate;
    s->stats.complete = plan.complete;
    if (changed) s->stats.backend = used;
    s->stats.steps += 1;
    return Errc::ok;
}

Reader::Reader() = default;
Reader::~Reader() = default;
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;

Errc Reader::open(std::unique_ptr<Source> source, Reader* out) noexcept {
    if (!source || !out) return Errc::invalid_argument;
    return mans::detail::errc_guard([&] {
        auto impl = std::make_unique<Impl>();
        impl->src = std::move(source);
        const std::uint64_t size = impl->src->size();
        std::vector<std::uint8_t> buf;
        MANS_RETURN_IF_ERROR(impl->read(0, static_cast<std::size_t>(std::min<std::uint64_t>(size, kPreambleBytes)), &buf));
        std::uint64_t hlen = 0;
        MANS_RETURN_IF_ERROR(parse_preamble(buf.data(), buf.size(), &hlen));
        const std::uint64_t need = kPreambleBytes + hlen + kChecksumBytes;
        if (need > size) return Errc::truncated;
        std::vector<std::uint8_t> rest;
        MANS_RETURN_IF_ERROR(impl->read(kPreambleBytes, static_cast<std::size_t>(need - kPreambleBytes), &rest));
        buf.insert(buf.end(), rest.begin(), rest.end());
        MANS_RETURN_IF_ERROR(parse_header(buf.data(), buf.size(), size, &impl->h));
        impl->header_bytes = buf;
        const Header& h = impl->h;
        impl->model = error_model(h);
        ArchiveInfo& i = impl->info;
        i.type = h.type;
        i.rank = h.grid.rank;
        for (unsigned a = 0; a < h.grid.rank; ++a) i.dims[a] = h.grid.n[a];
        i.count = h.grid.count;
        i.mode = h.mode;
        i.requested_bound = h.requested_bound;
        i.abs_bound = h.abs_bound;
        i.value_min = h.value_min;
        i.value_max = h.value_max;
        i.planes = static_cast<PlaneCoding>(h.coding);
        i.levels = h.levels;
        i.archive_bytes = h.total_bytes;
        i.header_bytes = h.header_bytes;
        i.base_bytes = h.base_bytes;
        i.masked_count = h.masked_count;
        i.outlier_count = h.outlier_count;
        i.full_max_error = h.full_max_error;
        i.fill_values = h.fill_values;
        out->impl_ = std::move(impl);
        return Errc::ok;
    });
}

const ArchiveInfo& Reader::info() const noexcept {
    static const ArchiveInfo kEmpty{};
    return impl_ ? impl_->info : kEmpty;
}

std::uint64_t Reader::bytes_read() const noexcept { return impl_ ? impl_->bytes_read : 0; }

Errc Reader::set_backend(mans::Backend b) noexcept {
    if (!impl_) return Errc::invalid_argument;
    switch (b) {
        case mans::Backend::automatic:
        case mans::Backend::cpu:
        case mans::Backend::cuda:
        case mans::Backend::hip: impl_->backend = b; return Errc::ok;
    }
    return Errc::invalid_argument;
}

Errc Reader::plan(const Target& target, const Retrieval* from, Plan* out) const noexcept {
    if (!impl_ || !out) return Errc::invalid_argument;
    return mans::detail::errc_guard([&] {
        const Header& h = impl_->h;
        std::vector<std::uint32_t> prev(h.levels, 0);
        std::uint64_t fixed = h.header_bytes + h.base_bytes;
        if (from) {
            const Retrieval::State* s = const_cast<Retrieval*>(from)->state();
            if (!s || !impl_->owns(*s)) return Errc::invalid_argument;
            prev = s->stats.planes;
            fixed = 0;
        }
        return make_plan(h, impl_->model, target, prev, fixed, out);
    });
}

Errc Reader::retrieve(const Target& target, Retrieval* out, int threads) noexcept {
    if (!impl_ || !out || threads < 0 || threads > kMaxThreads) return Errc::invalid_argument;
    return mans::detail::errc_guard([&] {
        auto state = std::make_unique<Retrieval::State>();
        MANS_RETURN_IF_ERROR(impl_->run(target, state.get(), true, threads ? threads : omp_get_max_threads()));
        out->state_ = std::move(state);
        return Errc::ok;
    });
}

Errc Reader::refine(Retrieval* r, const Target& target, int threads) noexcept {
    if (!impl_ || !r || !r->state() || !impl_->owns(*r->state()) || threads < 0 || threads > kMaxThreads)
        return Errc::invalid_argument;
    return mans::detail::errc_guard([&] {
        // run() changes *r only once everything succeeded.
        return impl_->run(target, r->state(), false, threads ? threads : omp_get_max_threads());
    });
}

}  // namespace mans::prism

namespace mans::detail::prism {

struct ReaderAccess {
    static mans::prism::Reader::Impl* impl(mans::prism::Reader& r) { return r.impl_.get(); }
};

Errc retrieve_to_device(mans::prism::Reader& r, const mans_backend_module& m, const mans::prism::Target& target,
                        mans::prism::Retrieval* x, bool fresh, void* d_out) {
    mans::prism::Reader::Impl* impl = ReaderAccess::impl(r);
    if (!impl || !d_out) return Errc::invalid_argument;
    // The reader's own choice is restored whatever happens.
    struct Restore {
        mans::prism::Reader::Impl* impl;
        bool direct;
        const mans_backend_module* module;
        ~Restore() {
            impl->direct = direct;
            impl->direct_module = module;
            impl->device_out = nullptr;
        }
    } restore{impl, impl->direct, impl->direct_module};
    impl->direct = true;
    impl->direct_module = &m;
    impl->device_out = d_out;
    return fresh ? r.retrieve(target, x, 1) : r.refine(x, target, 1);
}

Errc retrieve_with(const mans_backend_module* m, const std::uint8_t* archive, std::size_t bytes,
                   const mans::prism::Target& target, std::vector<std::uint8_t>* values) {
    mans::prism::Reader r;
    MANS_RETURN_IF_ERROR(mans::prism::Reader::open(mans::prism::memory_source(archive, bytes), &r));
    ReaderAccess::impl(r)->direct = true;
    ReaderAccess::impl(r)->direct_module = m;
    mans::prism::Retrieval out;
    MANS_RETURN_IF_ERROR(r.retrieve(target, &out, 1));
    const auto* p = static_cast<const std::uint8_t*>(out.data());
    values->assign(p, p + out.bytes());
    return Errc::ok;
}

}  // namespace mans::detail::prism
