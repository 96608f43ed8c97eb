import Foundation

/// An IPv4 or IPv6 network such as `10.0.0.0/8` or `fd00::/8`; used to decide which proxies are trusted.
public struct CIDR: Sendable, Hashable {
    let network: [UInt8]
    let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let address = IPAddress.parse(parts[0]) else { return nil }
        let maxLength = address.count * 8
        let length: Int
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...maxLength).contains(parsed) else { return nil }
            length = parsed
        } else {
            length = maxLength
        }
        self.network = address
        self.prefixLength = length
    }

    public func contains(_ address: String) -> Bool {
        guard var bytes = IPAddress.parse(address) else { return false }
        // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) matches IPv4 networks.
        if bytes.count == 16, network.count == 4, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            bytes = Array(bytes[12...])
        }
        guard bytes.count == network.count else { return false }
        var remaining = prefixLength
        for index in 0..<bytes.count where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != network[index] & mask { return false }
            remaining -= bits
        }
        return true
    }
}

public enum IPAddress {
    /// The address as 4 or 16 bytes, or `nil` when it is not an IP address.
    public static func parse(_ text: String) -> [UInt8]? {
        var address = text.trimmingCharacters(in: .whitespaces)
        if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        if let zone = address.firstIndex(of: "%") { address = String(address[..<zone]) }
        if address.contains(":") { return parseIPv6(address) }
        return parseIPv4(address)
    }

    static func parseIPv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func parseIPv6(_ text: String) -> [UInt8]? {
        var text = text
        // A trailing dotted IPv4 part (::ffff:1.2.3.4) becomes two hex groups.
        if let lastColon = text.lastIndex(of: ":"), text[text.index(after: lastColon)...].contains(".") {
            guard let v4 = parseIPv4(String(text[text.index(after: lastColon)...])) else { return nil }
            let high = String(UInt16(v4[0]) << 8 | UInt16(v4[1]), radix: 16)
            let low = String(UInt16(v4[2]) << 8 | UInt16(v4[3]), radix: 16)
            text = String(text[...lastColon]) + high + ":" + low
        }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard !group.isEmpty, group.count <= 4, let value = UInt16(group, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        let groupCount = 8
        guard let head = groups(halves[0]) else { return nil }
        var all: [UInt16]
        if halves.count == 2 {
            guard let rest = groups(halves[1]), head.count + rest.count < groupCount else { return nil }
            all = head + Array(repeating: 0, count: groupCount - head.count - rest.count) + rest
        } else {
            all = head
        }
        guard all.count == groupCount else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
