import Foundation

/// Durations as people type them on a command line: `30d`, `12h`, `90m`, `3600s`.
public enum DurationText {
    public static func seconds(_ text: String) -> TimeInterval? {
        guard let unit = text.last, let amount = Double(text.dropLast()), amount >= 0 else { return nil }
        switch unit {
        case "d": return amount * 86_400
        case "h": return amount * 3_600
        case "m": return amount * 60
        case "s": return amount
        default: return nil
        }
    }
}
