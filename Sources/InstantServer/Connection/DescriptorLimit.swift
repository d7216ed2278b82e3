#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit of open file descriptors (`ulimit -n`), which bounds how many
/// connections it can hold.
enum DescriptorLimit {
    /// The soft `RLIMIT_NOFILE`, or `nil` when it is unlimited or cannot be read.
    static func current() -> Int? {
        var limit = rlimit()
        #if canImport(Glibc)
        let result = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #else
        let result = getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        guard result == 0, limit.rlim_cur < rlim_t(Int.max) else { return nil }
        return Int(limit.rlim_cur)
    }
}
