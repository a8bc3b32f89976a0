import ArgumentParser
import Foundation
import HubAccess
import HubCore

extension HubctlCommand {
    /// `hubctl users …`: the household's accounts for the dashboard and the API.
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "users",
            abstract: "The household's accounts: who may look at the hub, act on its alerts, or manage it.",
            discussion: """
                Every page and API call of hubd needs a login or a token (docs/security.md). A viewer looks; a \
                member also acknowledges, snoozes and silences alerts and registers their phone; an admin also \
                adds and removes sensors. Passwords are kept as argon2id hashes in access.json in the state \
                directory (mode 0600); hubctl, run on the hub's machine, is the local administrator and works \
                whether or not hubd runs: a change takes effect at hubd's next request.

                Examples:
                  sudo hubctl users add ana --role admin        # asks for the password twice
                  sudo hubctl users add ben --role member --password-file -  < password.txt
                  hubctl users list
                  hubctl users passwd ben
                  hubctl users role ben viewer
                  hubctl users logins                           # who is logged in where
                  hubctl users logout ben                       # every login of ben's (a lost phone)
                  hubctl users remove ben
                """,
            subcommands: [Add.self, List.self, Passwd.self, SetRole.self, Remove.self, Logins.self, Logout.self],
            // The singular works too (`hubctl sensor list`), as people type it.
            aliases: ["user"]
        )
    }

    /// `hubctl tokens …`: API tokens for programs.
    struct Tokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tokens",
            abstract: "API tokens for programs (scripts, Home Assistant, Grafana): each with a scope, shown once.",
            discussion: """
                A token is sent as 'Authorization: Bearer <token>'. Its scope is what it may do: read (look), \
                write (what a member may: acknowledge, silence…), admin (everything). It is 192 random bits, shown \
                once when made and kept only as its SHA-256 in access.json; lost, revoke it and make another. \
                http.token in hubd.yaml still works, as an admin token.

                Examples:
                  hubctl tokens add grafana --scope read
                  hubctl tokens add ha --scope write --expires 365d
                  hubctl tokens list
                  hubctl tokens revoke grafana
                """,
            subcommands: [Add.self, List.self, Revoke.self],
            // The singular works too (`hubctl sensor list`), as people type it.
            aliases: ["token"]
        )
    }
}

/// Runs `body`, turning access errors into a message and hubctl's exit status.
func withAccessErrors<T>(_ body: () throws(AccessError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        Failure.printError(error.description)
        switch error {
        case .invalid, .exists, .unknown: throw ExitCode(Failure.invalidInput)
        case .store(let text) where text.contains("permission denied"): throw ExitCode(Failure.permissionDenied)
        case .store(let text) where text.contains("not a valid"): throw ExitCode(Failure.damagedFile)
        case .store, .system: throw ExitCode(Failure.ioError)
        }
    }
}

/// Where a new password comes from: `--password-file PATH` (its first line), `--password-file -` (standard input:
/// on a terminal asked twice without echo, else one line).
struct PasswordOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "File holding the password (its first line); '-' (the default) reads it from standard input, asking "
                + "twice without echo on a terminal.", valueName: "path"))
    var passwordFile = "-"

    func read(for user: String) throws -> String {
        let text = try readPasswordFile(passwordFile, prompt: "Password for \(user): ", confirm: true)
        _ = try withAccessErrors { () throws(AccessError) in try PasswordHash.check(text, user: user) }
        return text
    }
}

extension StateOptions {
    /// The accounts file of this command's state directory.
    func accessStore() async throws -> AccessStore {
        AccessStore(directory: try await state().path)
    }
}

extension Role: ExpressibleByArgument {}
extension Scope: ExpressibleByArgument {}

extension HubctlCommand.Users {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a person, with a role and a password.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The name they log in with: lowercase letters, digits, '.', '_' or '-'.") var name: String
        @Option(help: "viewer (looks), member (acts on alerts) or admin (manages the hub).") var role: Role
        @OptionGroup var password: PasswordOptions

        func validate() throws {
            _ = try withAccessErrors { () throws(AccessError) in try AccessDocument.checkName(name, what: "user") }
        }

        func run() async throws {
            let store = try await state.accessStore()
            let existing = try withAccessErrors { () throws(AccessError) in try store.read() }
            guard existing.user(named: name) == nil else {
                Failure.printError(
                    "there is already a user '\(name)' (hubctl users passwd \(name) changes the password)")
                throw ExitCode(Failure.invalidInput)
            }
            let secret = try password.read(for: name)
            let hash = try withAccessErrors { () throws(AccessError) in try PasswordHash.make(secret) }
            try withAccessErrors { () throws(AccessError) in
                try store.update { document throws(AccessError) in
                    try document.addUser(name, role: role, passwordHash: hash, now: .now)
                }
            }
            print("Added \(name) (\(role.rawValue)). They log in at the dashboard's /login.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the accounts, their roles and how many places each is logged in.")

        @OptionGroup var state: StateOptions
        @Flag(help: "JSON, for scripts (never a password hash).") var json = false

        func run() async throws {
            let store = try await state.accessStore()
            let document = try withAccessErrors { () throws(AccessError) in try store.read() }
            let now = Timestamp.now
            func logins(_ user: String) -> Int {
                document.sessions.filter { $0.user == user && AccessDocument.isLive($0, now: now) }.count
            }
            if json {
                let list = document.users.map { user -> [String: Any] in
                    [
                        "name": user.name, "role": user.role.rawValue, "created": user.created.iso8601,
                        "passwordChanged": user.passwordChanged.iso8601, "logins": logins(user.name),
                    ]
                }
                let data = try JSONSerialization.data(withJSONObject: list, options: [.prettyPrinted, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else if document.users.isEmpty {
                print("No accounts yet. Make the first: hubctl users add NAME --role admin")
            } else {
                let rows = document.users.map {
                    [$0.name, $0.role.rawValue, "\(logins($0.name))", Output.absolute($0.passwordChanged)]
                }
                print(Output.table(header: ["NAME", "ROLE", "LOGINS", "PASSWORD SET"], rows: rows), terminator: "")
            }
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passwd", abstract: "Set a person's password; every place they are logged in is logged out.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The user.") var name: String
        @OptionGroup var password: PasswordOptions

        func run() async throws {
            let store = try await state.accessStore()
            guard try withAccessErrors({ () throws(AccessError) in try store.read() }).user(named: name) != nil else {
                Failure.printError("no user '\(name)' (see hubctl users list)")
                throw ExitCode(Failure.invalidInput)
            }
            let secret = try password.read(for: name)
            let hash = try withAccessErrors { () throws(AccessError) in try PasswordHash.make(secret) }
            try withAccessErrors { () throws(AccessError) in
                try store.update { document throws(AccessError) in try document.setPassword(name, hash: hash, now: .now)
                }
            }
            print("Password of \(name) set; their logins were ended.")
        }
    }

    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "role", abstract: "Change a person's role (viewer, member or admin).")

        @OptionGroup var state: StateOptions
        @Argument(help: "The user.") var name: String
        @Argument(help: "viewer, member or admin.") var role: HubAccess.Role

        func run() async throws {
            let store = try await state.accessStore()
            try withAccessErrors { () throws(AccessError) in
                try store.update { document throws(AccessError) in try document.setRole(name, role: role) }
            }
            print("\(name) is now \(role == .admin ? "an" : "a") \(role.rawValue).")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a person's account and end their logins.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The user.") var name: String

        func run() async throws {
            let store = try await state.accessStore()
            let admins = try withAccessErrors { () throws(AccessError) in
                try store.update { document throws(AccessError) -> Int in
                    try document.removeUser(name)
                    return document.admins
                }
            }
            print("Removed \(name); their logins were ended.")
            if admins == 0 {
                print("No admin is left: hubctl users add NAME --role admin makes one (hubctl always can).")
            }
        }
    }

    struct Logins: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "logins", abstract: "List where people are logged in (a browser, a phone), newest first.")

        @OptionGroup var state: StateOptions
        @Argument(help: "Only this user's.") var name: String?

        func run() async throws {
            let store = try await state.accessStore()
            let document = try withAccessErrors { () throws(AccessError) in try store.read() }
            let now = Timestamp.now
            let sessions = document.sessions.filter {
                AccessDocument.isLive($0, now: now) && (name == nil || $0.user == name)
            }.sorted { $0.created > $1.created }
            guard !sessions.isEmpty else {
                print(name.map { "\($0) is logged in nowhere." } ?? "Nobody is logged in.")
                return
            }
            let rows = sessions.map {
                [
                    $0.id, $0.user, Output.shown($0.address), Output.absolute($0.created),
                    Output.relative($0.lastSeen, now: now), Output.shown(String($0.agent.prefix(40))),
                ]
            }
            print(
                Output.table(header: ["ID", "USER", "FROM", "LOGGED IN", "LAST SEEN", "BROWSER"], rows: rows),
                terminator: "")
        }
    }

    struct Logout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "logout",
            abstract: "End a person's logins: all of them, or one (--login ID, from hubctl users logins).")

        @OptionGroup var state: StateOptions
        @Argument(help: "The user.") var name: String
        @Option(help: ArgumentHelp("Only this login.", valueName: "id")) var login: String?

        func run() async throws {
            let store = try await state.accessStore()
            let ended = try withAccessErrors { () throws(AccessError) in
                try store.update { document throws(AccessError) -> Int in
                    guard document.user(named: name) != nil else { throw .unknown("no user '\(name)'") }
                    if let login {
                        guard document.sessions.contains(where: { $0.id == login && $0.user == name }) else {
                            throw .unknown("\(name) has no login '\(login)' (see hubctl users logins \(name))")
                        }
                        return document.endSessions(id: login)
                    }
                    return document.endSessions(user: name)
                }
            }
            print("Ended \(ended) login(s) of \(name).")
        }
    }
}

extension HubctlCommand.Tokens {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Make a token; it is printed once, and kept only as its hash.")

        @OptionGroup var state: StateOptions
        @Argument(help: "A name for it: what uses it (grafana, ha, backup-script).") var name: String
        @Option(help: "read, write or admin.") var scope: Scope
        @Option(
            help: ArgumentHelp("It stops working after this long (like 90d); default never.", valueName: "duration"))
        var expires: String?

        func validate() throws {
            _ = try withAccessErrors { () throws(AccessError) in try AccessDocument.checkName(name, what: "token") }
            if let expires, DurationText.parse(expires) == nil {
                throw ValidationError("--expires '\(expires)' is not a duration; use 30d, 365d or 12h.")
            }
        }

        func run() async throws {
            let store = try await state.accessStore()
            let now = Timestamp.now
            let until = expires.flatMap(DurationText.parse).map {
                now.adding(milliseconds: Int64($0.components.seconds) * 1000)
            }
            let token = try withAccessErrors { () throws(AccessError) in
                try store.update { document throws(AccessError) in
                    try document.addToken(
                        named: name, scope: scope, createdBy: AlertView.person, expires: until, now: now)
                }
            }
            print(token)
            FileHandle.standardError.write(
                Data(
                    ("hubctl: token \(name) (\(scope.rawValue)\(until.map { ", until \(Output.absolute($0))" } ?? "")): "
                        + "shown this once; send it as 'Authorization: Bearer <token>'\n").utf8))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the tokens (never the tokens themselves).")

        @OptionGroup var state: StateOptions

        func run() async throws {
            let store = try await state.accessStore()
            let document = try withAccessErrors { () throws(AccessError) in try store.read() }
            guard !document.tokens.isEmpty else {
                print("No tokens. Make one: hubctl tokens add NAME --scope read")
                return
            }
            let now = Timestamp.now
            let rows = document.tokens.map { token in
                [
                    token.name, token.scope.rawValue, token.id, Output.absolute(token.created), token.createdBy,
                    token.expires.map { $0 <= now ? "expired" : Output.absolute($0) } ?? "never",
                ]
            }
            print(
                Output.table(header: ["NAME", "SCOPE", "ID", "MADE", "BY", "EXPIRES"], rows: rows), terminator: "")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a token: refused from hubd's next request.")

        @OptionGroup var state: StateOptions
        @Argument(help: "The token's name or id.") var name: String

        func run() async throws {
            let store = try await state.accessStore()
            try withAccessErrors { () throws(AccessError) in
                try store.update { document throws(AccessError) in try document.revokeToken(name) }
            }
            print("Revoked \(name).")
        }
    }
}
