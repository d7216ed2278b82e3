import Foundation
import Synchronization

/// The value of an answer's `Date` header (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37
/// GMT`), formatted once a second for every connection.
enum HTTPDate {
    private static let latest = Mutex<(second: Int, text: String)>((-1, ""))

    /// The date now.
    static func now() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let second = Int(time.tv_sec)
        if let text = latest.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = format(second)
        latest.withLock { $0 = (second, text) }
        return text
    }

    /// The date of a time in seconds since 1970.
    static func format(_ second: Int) -> String {
        var time = time_t(second)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):"
            + "\(twoDigits(parts.tm_sec)) GMT"
    }
}
