import LanyardSupport

enum CIDRFixtures {
    static let loopback = CIDR("127.0.0.0/8")!
}
