import Hummingbird
import LanyardSupport

/// The client's IP: the socket peer, unless the peer is a trusted proxy, in which case the rightmost
/// `X-Forwarded-For` entry that is not itself a trusted proxy.
enum ClientAddress {
    static func resolve(peer: String?, forwardedFor: String?, trustedProxies: [CIDR]) -> String? {
        guard let peer else { return nil }
        func isTrusted(_ address: String) -> Bool { trustedProxies.contains { $0.contains(address) } }
        guard isTrusted(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where IPAddress.parse(hop) != nil {
            if !isTrusted(hop) { return hop }
        }
        return hops.first(where: { IPAddress.parse($0) != nil }) ?? peer
    }
}
