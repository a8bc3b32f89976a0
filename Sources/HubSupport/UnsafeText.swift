/// Characters that act on whatever shows text instead of being shown, and the one rule for them: names, topics,
/// broker settings, configuration values and statuses holding one are refused where they come in
/// (`problem(in:)`), and everything a terminal, a log line or a page shows is escaped anyway (`escaped(_:)`).
///
/// They are:
/// - control characters (Unicode category Cc: C0, DEL, C1): ESC starts a terminal escape sequence, BEL rings, a
///   line break forges a log line;
/// - invisible formatting characters (category Cf): the bidi embeddings, overrides and isolates (U+202A–U+202E,
///   U+2066–U+2069), the marks U+200E, U+200F and U+061C, which reorder the text around them; U+FEFF (a BOM),
///   zero-width spaces and joiners that hide text, and the tag characters that smuggle it;
/// - the line and paragraph separators U+2028 and U+2029, which some viewers break lines at.
///
/// Not counted: U+200C and U+200D (zero-width non-joiner and joiner), which Persian and Indic scripts and emoji
/// sequences need to be written correctly, and which reorder nothing.
package enum UnsafeText {
    /// Whether `scalar` is one of the characters above.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        // Below U+00AD (the soft hyphen, the first format character) everything else is printable.
        if value < 0xAD { return false }
        switch value {
        case 0x200C, 0x200D: return false
        case 0x2028, 0x2029: return true
        default: return scalar.properties.generalCategory == .format
        }
    }

    /// The unsafe characters some kinds of text may hold after all.
    package struct Allowed: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `\t`, in a status or a configuration value.
        package static let tab = Allowed(rawValue: 1)
        /// `\n`, in a message template.
        package static let lineBreak = Allowed(rawValue: 2)

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            (scalar == "\t" && contains(.tab)) || (scalar == "\n" && contains(.lineBreak))
        }
    }

    /// The first unsafe character in `text` that is not `allowed`, or `nil`. Printable ASCII (the common case) is
    /// checked byte by byte: this runs for every status a sensor sends, and for every name and topic of a registry
    /// read. A `String`, not any `StringProtocol`, and an option set, not a `Set` of characters: the generic version
    /// was not specialised across modules, and with the set a caller built on every call it was 10 % of reading a
    /// 100,000-sensor registry.
    package static func firstUnsafe(in text: String, allowing allowed: Allowed = []) -> Unicode.Scalar? {
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) { return nil }
        return text.unicodeScalars.first { isUnsafe($0) && !allowed.contains($0) }
    }

    /// Why `text` can't be taken, or `nil` when it can: "contains a control character (U+001B): …". The caller
    /// says what the text is ("the broker host 'x' …", "it …").
    /// - Parameter allowed: characters this kind of text may hold after all (a line break in a message template).
    package static func problem(in text: String, allowing allowed: Allowed = []) -> String? {
        guard let scalar = firstUnsafe(in: text, allowing: allowed) else { return nil }
        if scalar.properties.generalCategory == .control {
            return "contains a control character (\(codePoint(scalar))): control and invisible formatting"
                + " characters are not allowed, because terminals and logs act on them instead of showing them"
        }
        return "contains an invisible formatting character (\(codePoint(scalar))): control and invisible formatting"
            + " characters are not allowed, because they reorder or hide the text around them wherever it is shown"
    }

    /// `text` with every unsafe character written as a visible escape, `\u{1B}`, so that printing it can't move
    /// the cursor, change colours, reorder a line or start a new one.
    /// - Parameter keepingLineBreaks: leave `\n` as it is, for text of several lines that is ours (an error
    ///   message), whose values were escaped already.
    package static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard firstUnsafe(in: text) != nil else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) && !(keepingLineBreaks && scalar == "\n") {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `U+001B`.
    package static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
