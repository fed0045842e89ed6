// reader.cpp - sources, the Reader (header, base, planes on demand) and
// reconstruction of a Retrieval.
//
// A refinement adds the newly read digit planes to the codes the Retrieval
// keeps and reconstructs from them, so its result is bit-identical to a
// one-shot retrieval of the same planes (and costs one reconstruction, the
// same work as adding a reconstructed difference).
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>

#include "core/byte_io.hpp"
#include "core/frame.hpp"
#include "core/status.hpp"
#include "mans/prism.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/planner.hpp"
#include "prism/plane_coding.hpp"
#include "prism/traverse.hpp"

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

struct Retrieval::State {
    FloatType type = FloatType::f32;
    std::uint64_t count = 0;
    std::vector<std::uint8_t> out;                 // count values of type
    std::vector<std::vector<std::uint32_t>> words;  // per level: the planes read so far
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

    Errc read(std::uint64_t off, std::size_t n, std::vector<std::uint8_t>* buf) {
        buf->resize(n);
        MANS_RETURN_IF_ERROR(src->read_at(off, buf->data(), n));
        bytes_read += n;
        return Errc::ok;
    }
    // A Retrieval made by this reader, with the shapes this archive gives.
    bool owns(const Retrieval::State& s) const {
        if (s.owner != id || s.words.size() != h.levels || s.stats.planes.size() != h.levels) return false;
        for (unsigned l = 0; l < h.levels; ++l)
            if (s.words[l].size() != (h.level[l].planes ? h.level[l].codes : 0)) return false;
        return true;
    }
    Errc load_base();
    Errc load_planes(unsigned l, unsigned b0, unsigned b1, std::vector<std::uint32_t>* words, int threads);
    void reconstruct(Retrieval::State* s, int threads);
    template <typename T>
    void reconstruct_typed(Retrieval::State* s, int threads);
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

// Reads planes [b0, b1) of level l (one contiguous range) and ORs their bits
// into the level's words.
Errc Reader::Impl::load_planes(unsigned l, unsigned b0, unsigned b1, std::vector<std::uint32_t>* words,
                               int threads) {
    if (b1 <= b0) return Errc::ok;
    const LevelMeta& m = h.level[l];
    const std::uint64_t begin = h.plane_range_begin(l, b0);
    std::vector<std::uint8_t> buf;
    MANS_RETURN_IF_ERROR(read(begin, static_cast<std::size_t>(h.plane_range_bytes(l, b0, b1)), &buf));
    for (unsigned b = b0; b < b1; ++b) {  // verify before decoding anything
        const std::uint64_t at = h.plane_range_begin(l, b) - begin;
        const std::size_t n = static_cast<std::size_t>(h.plane_range_bytes(l, b, b + 1));
        if (checksum32(buf.data() + at, n) != h.plane_checksum[h.level_first_plane[l] + b]) return Errc::content_checksum;
    }
    const std::uint64_t C = h.chunk_codes, nchunks = h.chunks(l);
    const unsigned P = m.planes;
    Errc status = Errc::ok;
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (std::int64_t ch = 0; ch < static_cast<std::int64_t>(nchunks); ++ch) {
        const std::uint64_t first = static_cast<std::uint64_t>(ch) * C;
        const std::uint64_t len = std::min(C, m.codes - first);
        const std::uint8_t* payload[kMaxPlanes];
        std::size_t size[kMaxPlanes];
        for (unsigned b = b0; b < b1; ++b) {
            const std::size_t si = h.segment_index(l, b, static_cast<std::uint64_t>(ch));
            payload[b - b0] = buf.data() + (h.segment_offset[si] - begin);
            size[b - b0] = h.segments[si].stored;
        }
        const Errc e = decode_plane_chunks(payload, size, words->data() + first, len, b0, b1, P, h.coding);
        if (e != Errc::ok) {
#pragma omp critical
            status = e;
        }
    }
    return status;
}

template <typename T>
void Reader::Impl::reconstruct_typed(Retrieval::State* s, int threads) {
    const Grid& g = h.grid;
    const std::uint64_t n = g.count;
    const BlockGrid blocks = BlockGrid::make(g);
    std::vector<std::uint8_t> flags(static_cast<std::size_t>(n), kRegular);
    std::vector<double> work(static_cast<std::size_t>(n), 0.0);
    if (!base.mask_bits.empty())
        for (std::uint64_t i = 0; i < n; ++i)
            if (base.mask_bits[i / 8] >> (i % 8) & 1) flags[i] = kMasked;
    for (std::size_t i = 0; i < base.outlier_index.size(); ++i) {
        const std::uint64_t p = base.outlier_index[i];
        flags[p] = kOutlier;
        work[p] = static_cast<double>(load_le<T>(base.outlier_values.data() + i * sizeof(T)));
    }
    if (n && !base.anchor_value.empty()) flags[0] = kAnchor, work[0] = static_cast<double>(load_le<T>(base.anchor_value.data()));

    for (unsigned l = 0; l < h.levels; ++l) {
        const LevelMeta& m = h.level[l];
        const std::uint64_t u = level_unit(h.levels, l);
        const std::uint32_t* words = s->words[l].empty() ? nullptr : s->words[l].data();
        const std::vector<std::uint8_t>& kbits = base.kind_bits[l];
        for (const Pass& p : level_passes(g, u, m.scheme)) {
            for_each_pass_point(g, p, threads, [&](const Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t idx) {
                const std::uint8_t f = flags[idx];
                if (f == kOutlier) return;
                const double pred = predict_point(work.data(), idx, c, g.n, g.stride, g.rank, b.axes, u,
                                                  point_kind(m.kinds, kbits, blocks, c));
                if (f == kMasked) {
                    work[idx] = pred;
                    return;
                }
                const double q = words ? static_cast<double>(decode_word(words[b.first_code + k], h.coding)) : 0.0;
                work[idx] = pred + m.step * q;
            });
        }
    }
    s->out.resize(static_cast<std::size_t>(n * sizeof(T)));
    std::uint8_t* out = s->out.data();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i)
        mans::detail::store_le<T>(out + static_cast<std::uint64_t>(i) * sizeof(T), to_element<T>(work[i]));
    // Exactly kept values: masked (in point order), outliers, the anchor.
    std::size_t mi = 0;
    if (!base.mask_bits.empty())
        for (std::uint64_t i = 0; i < n; ++i)
            if (flags[i] == kMasked) std::memcpy(out + i * sizeof(T), base.masked_values.data() + sizeof(T) * mi++, sizeof(T));
    for (std::size_t i = 0; i < base.outlier_index.size(); ++i)
        std::memcpy(out + base.outlier_index[i] * sizeof(T), base.outlier_values.data() + i * sizeof(T), sizeof(T));
    if (n && !base.anchor_value.empty()) std::memcpy(out, base.anchor_value.data(), sizeof(T));
}

void Reader::Impl::reconstruct(Retrieval::State* s, int threads) {
    if (h.type == FloatType::f32) reconstruct_typed<float>(s, threads);
    else reconstruct_typed<double>(s, threads);
}

Errc Reader::Impl::run(const Target& target, Retrieval::State* s, bool fresh, int threads) {
    std::vector<std::uint32_t> prev(h.levels, 0);
    if (!fresh) prev = s->stats.planes;
    const std::uint64_t fixed = fresh ? h.header_bytes + h.base_bytes : 0;
    Plan plan;
    MANS_RETURN_IF_ERROR(make_plan(h, model, target, prev, fixed, &plan));
    const std::uint64_t before = bytes_read;
    MANS_RETURN_IF_ERROR(load_base());
    if (fresh) {
        s->type = h.type;
        s->count = h.grid.count;
        s->words.assign(h.levels, {});
        for (unsigned l = 0; l < h.levels; ++l)  // levels without planes have only zero codes
            s->words[l].assign(h.level[l].planes ? static_cast<std::size_t>(h.level[l].codes) : 0, 0);
        s->owner = id;
        s->stats = RetrievalStats{};
        s->stats.bytes_read = h.header_bytes + h.base_bytes;
    }
    bool changed = fresh;
    for (unsigned l = 0; l < h.levels; ++l) {
        if (plan.planes[l] <= prev[l]) continue;
        MANS_RETURN_IF_ERROR(load_planes(l, prev[l], plan.planes[l], &s->words[l], threads));
        s->stats.bytes_read += h.plane_range_bytes(l, prev[l], plan.planes[l]);
        changed = true;
    }
    if (changed) reconstruct(s, threads);
    s->stats.planes = plan.planes;
    s->stats.bytes_read_step = bytes_read - before;
    s->stats.max_abs_error_bound = plan.max_abs_error_bound;
    s->stats.psnr_estimate = plan.psnr_estimate;
    s->stats.complete = plan.complete;
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
        // Work on a copy of the codes so that a failed refinement leaves *r intact.
        Retrieval::State next = *r->state();
        MANS_RETURN_IF_ERROR(impl_->run(target, &next, false, threads ? threads : omp_get_max_threads()));
        *r->state() = std::move(next);
        return Errc::ok;
    });
}

}  // namespace mans::prism
