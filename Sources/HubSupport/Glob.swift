import Foundation

/// Shell-style glob (`*`, `?`, `[…]`), ignoring case: how rules name sensors (`door*`, `*-temp`).
package func glob(_ pattern: String, _ text: String) -> Bool {
    // FNM_CASEFOLD (a GNU extension Swift does not import) is 1 << 4.
    fnmatch(pattern, text, 1 << 4) == 0
}
