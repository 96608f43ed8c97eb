import Foundation
import LanyardSupport

/// Every source's way of writing a time (`docs/import-formats.md` section 6), read by hand: a 100,000-user import
/// reads 200,000 of them, and Foundation's formatters cost microseconds each.
enum ImportTimes {
    /// A number of milliseconds since 1970 (Clerk's integers, Firebase's decimal strings, the database reader's
    /// numbers), an RFC 3339 time with any fraction and offset (Supabase, Auth0, Lanyard's lines), or an HTTP date
    /// (Firebase's `listUsers`). `nil` for `null`, absent or anything else.
    static func parse(_ value: JSONValue?) -> Date? {
        switch value {
        case .number(let milliseconds): return Date(timeIntervalSince1970: milliseconds / 1000)
        case .string(let text): return parse(text)
        default: return nil
        }
    }

    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 else { return nil }
        if bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }), let milliseconds = Int64(text) {
            return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        if text.hasSuffix("GMT") { return httpDate(bytes) }
        return rfc3339(bytes)
    }

    /// `2023-06-29T05:17:56.9+00:00`, `2024-05-20T12:00:45.777Z`, `2024-05-20 12:00:45Z`.
    private static func rfc3339(_ bytes: [UInt8]) -> Date? {
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + digits)] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2) else { return nil }
        // Kept to the millisecond, as Lanyard stores times (and as the millisecond forms read).
        var milliseconds = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            var scale = 100
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                milliseconds += Int(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2) else { return nil }
            var minutes = 0
            if index < bytes.count {
                _ = expect(":")
                guard let parsed = number(2) else { return nil }
                minutes = parsed
            }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard index == bytes.count, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds * 1000 + milliseconds) / 1000)
    }

    /// `Mon, 20 May 2024 12:00:45 GMT` (RFC 7231's IMF-fixdate, what `Date.toUTCString()` writes).
    private static func httpDate(_ bytes: [UInt8]) -> Date? {
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]),
              let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3]) else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), clock[0] < 24, clock[1] < 60, clock[2] < 61 else { return nil }
        let seconds = daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
