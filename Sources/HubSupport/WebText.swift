import Foundation

/// Text put into HTML and URLs: the one escaping of each, for the dashboard and for the backends that send HTML
/// (Matrix' formatted body) or build URLs from names (a Matrix room, an HTML form).
package enum WebText {
    /// Text safe inside HTML and SVG: markup characters as entities, control and formatting characters
    /// (`UnsafeText`) as visible `\u{202E}`, so that a status can't reorder or hide what a page shows around it.
    package static func html(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        for character in UnsafeText.escaped(text) {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }

    /// RFC 3986's unreserved characters: what may stand in a URL's path segment or query as it is.
    package static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `text` with every byte but the unreserved ones percent-encoded: one path segment, or one query value.
    package static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
