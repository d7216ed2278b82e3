import Foundation

/// Dates of the format: ISO 8601 date-times with an optional fraction of a second and a time zone
/// (`2018-07-03T13:53:03Z`, `2018-07-03T13:53:03.250+02:00`).
///
/// Records keep the string they were given, so a date always round-trips as written; these
/// functions convert between such strings and `Date`.
public enum InstantDate {
    /// The instant a string denotes, or `nil` if it is not an ISO 8601 date-time with a time zone.
    public static func parse(_ string: String) -> Date? {
        let bytes = Array(string.utf8)
        // yyyy-MM-ddTHH:mm:ss, then optional .fraction, then Z or ±hh:mm (or ±hhmm).
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") || bytes[10] == UInt8(ascii: " "),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
            let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                fraction += Double(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(bytes, index, 2) else { return nil }
            index += 2
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") { index += 1 }
            guard let minutes = number(bytes, index, 2), hours < 24, minutes < 60 else { return nil }
            index += 2
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        guard day <= daysInMonth(month, year: year) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// The string for a date: UTC, with milliseconds only when the date has a fraction of a second.
    public static func string(from date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var milliseconds = Int64((interval * 1000).rounded())
        let millisecond = Int(((milliseconds % 1000) + 1000) % 1000)
        milliseconds -= Int64(millisecond)
        let totalSeconds = milliseconds / 1000
        var days = totalSeconds / 86_400
        var secondsOfDay = totalSeconds % 86_400
        if secondsOfDay < 0 {
            secondsOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civilFromDays(days)
        let hour = Int(secondsOfDay / 3600)
        let minute = Int(secondsOfDay % 3600 / 60)
        let second = Int(secondsOfDay % 60)
        // Written digit by digit into one buffer: every pushed record carries a date, and
        // formatting each part as a string of its own cost more than the rest of this.
        var text: [UInt8] = []
        text.reserveCapacity(24)
        func write(_ value: Int, digits width: Int, after separator: UInt8? = nil) {
            if let separator { text.append(separator) }
            var value = value
            if value < 0 {
                text.append(UInt8(ascii: "-"))
                value = -value
            }
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while value / 10 >= divisor { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        write(year, digits: 4)
        write(month, digits: 2, after: UInt8(ascii: "-"))
        write(day, digits: 2, after: UInt8(ascii: "-"))
        write(hour, digits: 2, after: UInt8(ascii: "T"))
        write(minute, digits: 2, after: UInt8(ascii: ":"))
        write(second, digits: 2, after: UInt8(ascii: ":"))
        if millisecond != 0 { write(millisecond, digits: 3, after: UInt8(ascii: ".")) }
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ length: Int) -> Int? {
        guard start + length <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[start..<start + length] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil calendar algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
