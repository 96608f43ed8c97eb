import LanyardSupport

/// Draws the random parts of a new email flow: its code, its match number, its link token and device secret.
/// (`EmailSecrets` keeps them safe once drawn.)
enum EmailSecretGenerator {
    /// Six digits, uniformly (rejection sampling over 20 bits).
    static func code(_ random: any RandomSource) -> String {
        while true {
            let bytes = random.bytes(3)
            let value = (Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])) & 0xFFFFF
            if value < 1_000_000 { return String(format: "%06d", value) }
        }
    }

    /// 10 to 99, uniformly.
    static func match(_ random: any RandomSource) -> Int {
        while true {
            let value = Int(random.bytes(1)[0]) & 0x7F
            if value < 90 { return 10 + value }
        }
    }

    /// 256 bits, base64url: a link token or a device's flow secret.
    static func token(_ random: any RandomSource) -> String {
        Base64URL.encode(random.bytes(32))
    }
}
