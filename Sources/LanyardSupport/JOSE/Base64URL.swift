/// Base64url without padding, as JOSE uses it (RFC 7515 section 2). Byte-level: it runs on every token.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let encode = { (input: UnsafeBufferPointer<UInt8>) -> String in
            alphabet.withUnsafeBufferPointer { alphabet in
                let length = input.count / 3 * 4 + [0, 2, 3][input.count % 3]
                return String(unsafeUninitializedCapacity: length) { output in
                    var read = 0, written = 0
                    while read + 3 <= input.count {
                        let chunk = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8 | UInt32(input[read + 2])
                        output[written] = alphabet[Int(chunk >> 18 & 63)]
                        output[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                        output[written + 2] = alphabet[Int(chunk >> 6 & 63)]
                        output[written + 3] = alphabet[Int(chunk & 63)]
                        read += 3
                        written += 4
                    }
                    let remaining = input.count - read
                    if remaining > 0 {
                        var chunk = UInt32(input[read]) << 16
                        if remaining == 2 { chunk |= UInt32(input[read + 1]) << 8 }
                        output[written] = alphabet[Int(chunk >> 18 & 63)]
                        output[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                        if remaining == 2 { output[written + 2] = alphabet[Int(chunk >> 6 & 63)] }
                    }
                    return length
                }
            }
        }
        return bytes.withContiguousStorageIfAvailable(encode) ?? Array(bytes).withUnsafeBufferPointer(encode)
    }

    /// The bytes, or `nil` for anything that is not unpadded base64url.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(utf8: $0) }
    }

    static func decode(utf8 input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        if input.count % 4 == 1 { return nil }
        let length = input.count / 4 * 3 + [0, 0, 1, 2][input.count % 4]
        return decodingTable.withUnsafeBufferPointer { table -> [UInt8]? in
            var valid = true
            let output = [UInt8](unsafeUninitializedCapacity: length) { output, count in
                var read = 0, written = 0
                while read + 4 <= input.count {
                    let a = table[Int(input[read])], b = table[Int(input[read + 1])]
                    let c = table[Int(input[read + 2])], d = table[Int(input[read + 3])]
                    if (a | b | c | d) == 0xFF { valid = false; break }
                    let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    output[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                    output[written + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    output[written + 2] = UInt8(truncatingIfNeeded: chunk)
                    read += 4
                    written += 3
                }
                let remaining = input.count - read
                if valid, remaining >= 2 {
                    let a = table[Int(input[read])], b = table[Int(input[read + 1])]
                    let c = remaining == 3 ? table[Int(input[read + 2])] : 0
                    // Leftover bits must be zero padding (canonical encoding).
                    let leftover = remaining == 2 ? b & 0x0F : c & 0x03
                    if (a | b | c) == 0xFF || leftover != 0 {
                        valid = false
                    } else {
                        let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                        output[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                        if remaining == 3 { output[written + 1] = UInt8(truncatingIfNeeded: chunk >> 8) }
                    }
                }
                count = valid ? length : 0
            }
            return valid ? output : nil
        }
    }
}
