// Runs a fuzz target over files and folders given on the command line, so
// that the corpora also run as ordinary tests in any build (no libFuzzer).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

static int run_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<std::uint8_t> buf((std::istreambuf_iterator<char>(f)), {});
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
    return 1;
}

int main(int argc, char** argv) {
    int files = 0;
    for (int i = 1; i < argc; ++i) {
        const fs::path p(argv[i]);
        if (fs::is_directory(p)) {
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file()) files += run_file(e.path());
        } else if (fs::is_regular_file(p)) {
            files += run_file(p);
        }
    }
    std::printf("%s: %d inputs, no failure\n", argv[0], files);
    return files > 0 ? 0 : 1;
}
