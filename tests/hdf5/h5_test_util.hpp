// h5_test_util.hpp - small helpers for the HDF5 filter tests: RAII ids,
// real data from ../shared/data, writing and reading chunked datasets, and
// the messages on HDF5's error stack.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace h5test {

// Closes an HDF5 id with the right function when it goes out of scope.
class Id {
public:
    Id() = default;
    Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    Id(Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
    Id& operator=(Id&& o) noexcept {
        reset();
        id_ = o.id_;
        close_ = o.close_;
        o.id_ = -1;
        return *this;
    }
    ~Id() { reset(); }
    void reset() {
        if (id_ >= 0 && close_) close_(id_);
        id_ = -1;
    }
    hid_t get() const { return id_; }
    operator hid_t() const { return id_; }
    bool ok() const { return id_ >= 0; }

private:
    hid_t id_ = -1;
    herr_t (*close_)(hid_t) = nullptr;
};

inline std::vector<unsigned char> read_shared(const std::string& name) {
    const std::string path = std::string(MANS_SHARED_DATA_DIR) + "/" + name;
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("missing real data file " + path);
    return std::vector<unsigned char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

template <class T>
std::vector<T> read_shared_as(const std::string& name) {
    const std::vector<unsigned char> b = read_shared(name);
    std::vector<T> v(b.size() / sizeof(T));
    std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
    return v;
}

inline std::string temp_path(const std::string& stem) {
    return std::string(MANS_TEST_TMP_DIR) + "/" + stem + ".h5";
}

inline Id create_file(const std::string& path) {
    return Id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
}
inline Id open_file(const std::string& path) {
    return Id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
}

// A chunked dcpl; `add_filter` puts the filter on it (returns < 0 on error).
inline Id chunked_dcpl(const std::vector<hsize_t>& chunk, const std::function<herr_t(hid_t)>& add_filter) {
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()) < 0) return Id();
    if (add_filter && add_filter(dcpl) < 0) return Id();
    return dcpl;
}

inline std::string error_stack_text();

// The error stack of the last failed write_dataset (closing ids clears it).
inline std::string& last_error() {
    static std::string text;
    return text;
}

// Creates dataset `name` of file type `ftype` and writes `data` (memory type
// `mtype`); returns false when any step fails, with last_error() set.
inline bool write_dataset(hid_t file, const char* name, hid_t ftype, hid_t mtype, const std::vector<hsize_t>& dims,
                          hid_t dcpl, const void* data) {
    last_error().clear();
    Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
    Id dset(H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
    if (!dset.ok() || H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 || H5Dflush(dset) < 0) {
        last_error() = error_stack_text();
        return false;
    }
    return true;
}

// Reads a whole dataset as `mtype` into out (sized by the caller); false on error.
inline bool read_dataset(hid_t file, const char* name, hid_t mtype, void* out) {
    Id dset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
    if (!dset.ok()) return false;
    return H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0;
}

// All descriptions on the default error stack, joined by " | ".
inline std::string error_stack_text() {
    std::string text;
    H5Ewalk2(
        H5E_DEFAULT, H5E_WALK_DOWNWARD,
        [](unsigned, const H5E_error2_t* e, void* user) -> herr_t {
            auto* t = static_cast<std::string*>(user);
            if (e->desc) *t += std::string(e->desc) + " | ";
            return 0;
        },
        &text);
    return text;
}

}  // namespace h5test
