// prism_report.hpp - what the mans CLI prints about PRISM (lossy) runs and
// archives: --stats lines, --json objects and the `info` text/JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mans/prism.hpp"

namespace mans_cli {

// A measured reconstruction (--verify / --original) and its verdict.
struct QualityCheck {
    bool present = false;
    mans::prism::Quality q;
    bool bound_met = false;  // max error within every bound that applies, exact values kept
};

struct PrismCompressReport {
    std::string input, output;         // as displayed
    mans::prism::ArchiveInfo info;     // of the new archive
    double seconds = 0;                // library call only
    int threads = 0;
    std::string backend;               // mans::backend_report() line (--stats, --json)
    QualityCheck check;                // --verify
};

struct PrismRetrieveReport {
    std::string input, output;
    mans::prism::ArchiveInfo info;
    mans::prism::Target target;
    bool has_requested_bound = false;  // abs/rel target
    double requested_bound = 0;        // absolute, data units
    mans::prism::RetrievalStats stats;
    std::uint64_t bytes_read = 0;      // fetched from the source (header included)
    double seconds = 0;                // retrieve() only
    int threads = 0;
    std::string backend;               // mans::backend_report() line (--stats, --json)
    QualityCheck check;                // --original
};

// One row of the `info` table: a requested relative bound (or full) and its plan.
struct RetrievalRow {
    bool full = false;
    double rel_bound = 0;             // requested, x value range
    double abs_bound = 0;             // the same in data units
    bool reachable = true;            // false: tighter than the archive
    mans::prism::Plan plan;
};

const char* error_mode_name(mans::prism::ErrorMode m);     // "abs" | "rel"
const char* plane_coding_name(mans::prism::PlaneCoding c);  // "negabinary" | "sign-magnitude"
const char* target_kind_name(mans::prism::Target::Kind k);  // "abs" "rel" "psnr" "bytes" "full"
std::string dims_text(const mans::prism::ArchiveInfo& info);  // "17x96x192"
std::uint64_t raw_bytes(const mans::prism::ArchiveInfo& info);

std::string prism_compress_line(const PrismCompressReport& r);
std::string prism_compress_json(const PrismCompressReport& r);
std::string prism_retrieve_line(const PrismRetrieveReport& r);
std::string prism_retrieve_json(const PrismRetrieveReport& r);
std::string prism_info_text(const std::string& input, const mans::prism::ArchiveInfo& info,
                            const std::vector<RetrievalRow>& rows);
std::string prism_info_json(const std::string& input, const mans::prism::ArchiveInfo& info,
                            const std::vector<RetrievalRow>& rows);

}  // namespace mans_cli
