// sz_args.cpp - see sz_args.hpp.
#include "sz_args.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <set>

#include "commands.hpp"

namespace mans_cli {
namespace {

// mans options that take a value in the next argument.
const std::set<std::string>& value_options() {
    static const std::set<std::string> opts = {
        "-i",           "--input",  "-o",      "--output",     "--threads", "--backend",
        "-t",           "--dtype",  "--dims",  "--block-size", "--planes",  "--fill",
        "--error-bound", "--psnr",  "--bytes", "--original"};
    return opts;
}

bool is_positive_integer(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }) &&
           s.find_first_not_of('0') != std::string::npos;
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
}

}  // namespace

std::vector<std::string> translate_sz_args(const std::vector<std::string>& args) {
    // The subcommand: the first argument that is not an option.
    std::size_t sub = 1;
    while (sub < args.size() && !args[sub].empty() && args[sub][0] == '-') ++sub;
    if (sub >= args.size()) return args;
    const bool compress = args[sub] == "compress";
    if (!compress && args[sub] != "decompress") return args;

    std::vector<std::string> out(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(sub) + 1);
    std::string mode, abs_eb, rel_eb;
    bool have_mode = false, have_abs = false, have_rel = false;
    std::size_t bound_at = 0;  // where the translated bound goes in `out`
    auto value_of = [&](std::size_t& i, const std::string& flag) -> std::string {
        if (i + 1 >= args.size()) throw CliError(kExitUsage, flag + " needs a value");
        return args[++i];
    };
    auto mark_bound = [&] {
        if (!have_mode && !have_abs && !have_rel) bound_at = out.size();
    };

    for (std::size_t i = sub + 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {  // everything after it is left alone
            out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
            break;
        }
        if (value_options().count(a)) {
            out.push_back(a);
            if (i + 1 < args.size()) out.push_back(args[++i]);
            continue;
        }
        if (compress && (a == "-f" || a == "-d")) {
            out.push_back(a == "-f" ? "--dtype=f32" : "--dtype=f64");
            continue;
        }
        if (compress && a.size() == 2 && a[0] == '-' && a[1] >= '1' && a[1] <= '4') {
            const int rank = a[1] - '0';
            std::vector<std::string> fastest_first;
            for (int k = 0; k < rank; ++k) {
                if (i + 1 >= args.size() || !is_positive_integer(args[i + 1]))
                    throw CliError(kExitUsage, a + " expects " + std::to_string(rank) +
                                                   " positive dimension(s), fastest first (SZ order), e.g. "
                                                   "-3 192 96 17 for --dims 17x96x192" +
                                                   (i + 1 < args.size() ? "; got '" + args[i + 1] + "'" : ""));
                fastest_first.push_back(args[++i]);
            }
            std::string dims;
            for (auto it = fastest_first.rbegin(); it != fastest_first.rend(); ++it)
                dims += (dims.empty() ? "" : "x") + *it;
            out.push_back("--dims=" + dims);
            continue;
        }
        if (a == "-M") {
            mark_bound();
            mode = upper(value_of(i, a));
            have_mode = true;
            continue;
        }
        if (a == "-A" || a == "-R") {
            mark_bound();
            (a == "-A" ? abs_eb : rel_eb) = value_of(i, a);
            (a == "-A" ? have_abs : have_rel) = true;
            continue;
        }
        out.push_back(a);
    }

    if (!have_mode && !have_abs && !have_rel) return out;
    bool relative = false;
    if (have_mode) {
        if (mode == "ABS") {
            if (!have_abs) throw CliError(kExitUsage, "-M ABS needs -A BOUND (absolute error bound)");
        } else if (mode == "REL") {
            if (!have_rel) throw CliError(kExitUsage, "-M REL needs -R BOUND (bound relative to the value range)");
            relative = true;
        } else {
            throw CliError(kExitUsage, "-M " + mode +
                                           ": unsupported error mode (expected ABS or REL; for a PSNR "
                                           "target use `mans decompress --psnr DB`)");
        }
    } else if (have_abs && have_rel) {
        throw CliError(kExitUsage, "both -A and -R given: choose one with -M ABS or -M REL");
    } else {
        relative = have_rel;
    }
    std::vector<std::string> bound = {"--error-bound=" + (relative ? rel_eb : abs_eb)};
    if (relative) bound.push_back("--rel");
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(bound_at), bound.begin(), bound.end());
    return out;
}

}  // namespace mans_cli
