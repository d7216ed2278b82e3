import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`: what ``ChildProcess`` and ``PostgresTestServer``
/// run their programs with, instead of Foundation's `Process`.
///
/// On Linux, Foundation's `Process.run()` can crash the whole test run: to close the child's other
/// descriptors it lists `/proc/self/fd` and copies each directory entry whole, which reads past the
/// end of glibc's buffer when an entry sits at its end before an unmapped page
/// (swift-corelibs-foundation pull request 5472, not in Swift 6.3.1). A fresh-clone CI run crashed
/// there once. This starts the child with `posix_spawn` and has the C library close the child's
/// other descriptors (`posix_spawn_file_actions_addclosefrom_np`).
///
/// The child gets standard input from `/dev/null`, the given descriptors (or `/dev/null`) as
/// standard output and error, every signal at its default action and none blocked. Its end is
/// found by polling `waitpid`, so it never blocks another thread.
final class SpawnedProcess: @unchecked Sendable {
    /// The program could not be started.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The process id.
    let processIdentifier: pid_t
    private let lock = NSLock()
    /// The wait status, once the process ended and was reaped (under `lock`).
    private var waitStatus: Int32?

    /// Starts `executable` (a path) with `arguments`.
    /// - Parameters:
    ///   - environment: The child's environment; this process's when `nil`.
    ///   - directory: The directory it starts in; this process's when `nil`.
    ///   - output: Where its standard output goes (`/dev/null` when `nil`).
    ///   - errors: Where its standard error goes (`/dev/null` when `nil`).
    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        output: Int32? = nil, errors: Int32? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (target, source) in [(Int32(1), output), (Int32(2), errors)] {
            if let source {
                posix_spawn_file_actions_adddup2(&actions, source, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            }
        }
        if let directory {
            guard let addChdir = Self.addChdir else {
                throw Failure(description: "This C library cannot start a program in another directory.")
            }
            _ = directory.withCString { addChdir(&actions, $0) }
        }
        Self.addCloseFrom.map { _ = $0(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw Failure(description: "Cannot run \(executable): \(String(cString: strerror(result))).")
        }
        processIdentifier = pid
    }

    /// Whether the process has not ended yet.
    var isRunning: Bool { reaped() == nil }

    /// Waits until the process ended.
    func waitUntilExit() {
        while reaped() == nil { usleep(2_000) }
    }

    /// Waits until the process ended, at most `seconds`; returns whether it did.
    func waitUntilExit(within seconds: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while reaped() == nil {
            guard Date() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// Whether it ended by exiting (rather than by a signal); `false` while it runs.
    var exited: Bool { reaped().map { $0 & 0x7f == 0 } ?? false }

    /// The exit status, or the signal that ended it; 0 while it runs.
    var terminationStatus: Int32 {
        guard let status = reaped() else { return 0 }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// Sends `signal` unless the process ended.
    func send(_ signal: Int32) {
        lock.withLock {
            if waitStatus == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// The wait status once the process ended (reaping it then), `nil` while it runs.
    private func reaped() -> Int32? {
        lock.withLock {
            if let waitStatus { return waitStatus }
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(processIdentifier, &status, WNOHANG)
            } while result == -1 && errno == EINTR
            if result == processIdentifier {
                waitStatus = status
            } else if result == -1 {
                // Not our child any more (reaped elsewhere): ended, status unknown.
                waitStatus = 0xff << 8
            }
            return waitStatus
        }
    }

    private typealias FileAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias PathAction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift does not
    /// import (a GNU extension).
    private static let addCloseFrom: FileAction? = symbol("posix_spawn_file_actions_addclosefrom_np")

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later).
    private static let addChdir: PathAction? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }
}
