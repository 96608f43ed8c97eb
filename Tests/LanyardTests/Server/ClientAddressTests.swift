import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct ClientAddressTests {
    let proxies = [CIDR("10.0.0.0/8")!, CIDR("fd00::/8")!]

    @Test func anUntrustedPeerIsTheClient() {
        #expect(ClientAddress.resolve(peer: "203.0.113.9", forwardedFor: "1.2.3.4", trustedProxies: proxies) == "203.0.113.9")
    }

    @Test func behindATrustedProxyTheRightmostUntrustedHopIsTheClient() {
        #expect(ClientAddress.resolve(peer: "10.1.2.3", forwardedFor: "6.6.6.6, 198.51.100.7, 10.0.0.5",
                                      trustedProxies: proxies) == "198.51.100.7")
    }

    @Test func cidrsMatchIPv4IPv6AndMappedAddresses() {
        #expect(CIDR("10.0.0.0/8")!.contains("10.255.0.1"))
        #expect(!CIDR("10.0.0.0/8")!.contains("11.0.0.1"))
        #expect(CIDR("10.0.0.0/8")!.contains("::ffff:10.1.1.1"))
        #expect(CIDR("fd00::/8")!.contains("fd12:3456::1"))
        #expect(!CIDR("fd00::/8")!.contains("fe80::1"))
        #expect(CIDR("127.0.0.1")!.contains("127.0.0.1"))
        #expect(CIDR("300.0.0.0/8") == nil)
        #expect(CIDR("10.0.0.0/33") == nil)
    }
}
