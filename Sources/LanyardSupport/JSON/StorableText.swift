#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Whether the string holds U+0000: JSON can carry it (`\u0000`), PostgreSQL's text cannot store it.
    /// Read with `memchr` over the UTF-8 bytes; it runs on every string member of every request body,
    /// ID tokens among them, where a byte-by-byte walk of the `utf8` view showed in the profile.
    public var containsNUL: Bool {
        var string = self
        return string.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }
}
