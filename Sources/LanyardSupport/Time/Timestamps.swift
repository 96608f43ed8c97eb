import Foundation

/// ISO 8601 with milliseconds, in UTC (`2026-11-21T17:29:44.961Z`), written by hand: it runs for every
/// timestamp of every response, and the general formatters cost microseconds each.
public enum Timestamps {
    public static func format(_ date: Date) -> String {
        // Nearest, not down: stored times are whole milliseconds, and x.961 s can come back as x.96099… s.
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var output = [UInt8]()
        output.reserveCapacity(24)
        func append(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var remaining = value
            while divisor > 0 {
                output.append(UInt8(ascii: "0") + UInt8(remaining / divisor % 10))
                remaining %= divisor
                divisor /= 10
            }
        }
        append(Int(parts.tm_year) + 1900, digits: 4)
        output.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mon) + 1, digits: 2)
        output.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mday), digits: 2)
        output.append(UInt8(ascii: "T"))
        append(Int(parts.tm_hour), digits: 2)
        output.append(UInt8(ascii: ":"))
        append(Int(parts.tm_min), digits: 2)
        output.append(UInt8(ascii: ":"))
        append(Int(parts.tm_sec), digits: 2)
        output.append(UInt8(ascii: "."))
        append(Int(milliseconds - milliseconds.floorDivided(by: 1000) * 1000), digits: 3)
        output.append(UInt8(ascii: "Z"))
        return String(decoding: output, as: UTF8.self)
    }
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
