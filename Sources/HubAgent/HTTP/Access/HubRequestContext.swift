import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, with the address it came from (the login throttle and the sessions list use
/// it) and the identity the gate found.
public struct HubRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address as the socket says (a reverse proxy's, behind one); nil on a Unix socket.
    public let peer: String?
    /// Who the request is from, once the gate let it in (nil on the public routes).
    var identity: Identity?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress
    }
}
