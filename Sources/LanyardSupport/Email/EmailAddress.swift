import Foundation

/// An email address as Lanyard keeps it: the subject of an `email` identity (reference section 18). Lower-cased,
/// the domain in its ASCII form (IDNA labels as Punycode), at most 254 bytes. Addresses that cannot be written
/// into a mail header safely are refused, never repaired.
public struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }
    public var domain: Substring { value[value.index(after: value.lastIndex(of: "@")!)...] }

    public static let maxLength = 254
    public static let maxLocalLength = 64

    /// Why an address is refused, in words for the one error shape.
    public enum Problem: Error, Equatable, Sendable {
        case empty, tooLong, controlCharacter, shape, localPart, domain

        public var message: String {
            switch self {
            case .empty: "Enter an email address"
            case .tooLong: "The email address is longer than 254 bytes"
            case .controlCharacter: "The email address contains a line break or another control character"
            case .shape: "The email address must be one local part, @, and a domain"
            case .localPart: "The part before @ may hold letters, digits and !#$%&'*+/=?^_`{|}~.- (no leading, trailing or double dots, at most 64)"
            case .domain: "The domain is not a valid host name (labels of letters, digits and hyphens, with a dot)"
            }
        }
    }

    private static let localCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_`{|}~.-".unicodeScalars)

    public init(_ text: String) throws(Problem) {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= 1024 else { throw .tooLong }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" })
        else { throw .controlCharacter }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw .shape }
        let local = parts[0].lowercased()
        guard local.utf8.count <= Self.maxLocalLength, local.unicodeScalars.allSatisfy(Self.localCharacters.contains),
              local.first != ".", local.last != ".", !local.contains("..")
        else { throw .localPart }
        var domain = parts[1].precomposedStringWithCanonicalMapping.lowercased()
        if domain.hasSuffix(".") { domain.removeLast() }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard labels.count >= 2 else { throw .domain }
        let ascii = try labels.map { (label) throws(Problem) -> String in
            guard let converted = Punycode.asciiLabel(label), Self.isHostLabel(converted) else { throw .domain }
            return converted
        }
        let value = local + "@" + ascii.joined(separator: ".")
        guard value.utf8.count <= Self.maxLength else { throw .tooLong }
        self.value = value
    }

    private static func isHostLabel(_ label: String) -> Bool {
        let bytes = Array(label.utf8)
        guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: "-") }
    }
}
