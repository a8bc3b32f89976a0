import HubSupport
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// hubd's own HTTPS (`http.tls_certificate`, `http.tls_key`): the certificate and key read at start and again on
/// SIGHUP, so a renewed certificate (certbot, acme.sh, a yearly self-signed one) is taken without a restart; a
/// connection gets the context current when it opens. A pair that can't be read at a reload is logged and the
/// running one kept.
final class TLSFiles: Sendable {
    let certificate: String
    let key: String
    private let context: Locked<NIOSSLContext>

    init(certificate: String, key: String) throws {
        self.certificate = certificate
        self.key = key
        context = Locked(try Self.read(certificate: certificate, key: key))
    }

    var current: NIOSSLContext { context.withLock { $0 } }

    /// Reads the files again; false (logged) when they can't be used.
    @discardableResult
    func reload(logger: Logger) -> Bool {
        do {
            let new = try Self.read(certificate: certificate, key: key)
            context.withLock { $0 = new }
            logger.notice("HTTPS certificate read again", metadata: ["certificate": "\(certificate)"])
            return true
        } catch {
            logger.error(
                "the HTTPS certificate or key can't be read; the running one stays",
                metadata: ["certificate": "\(certificate)", "key": "\(key)", "error": "\(error)"])
            return false
        }
    }

    static func read(certificate: String, key: String) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
        guard !chain.isEmpty else { throw TLSFilesError(description: "\(certificate) holds no certificate") }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        configuration.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: configuration)
    }
}

struct TLSFilesError: Error, CustomStringConvertible {
    var description: String
}

/// Hummingbird's HTTP/1 child channel behind TLS, with the context `TLSFiles` holds when the connection opens.
struct ReloadingTLSChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let files: TLSFiles

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let context = files.current
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
