import HubCore
import Mosquitto

/// The hub's broker settings (kept in the registry) as the wrapper takes them: the one place where the registry's
/// model meets libmosquitto's, shared by hubd and hubctl.
extension BrokerSettings {
    /// The wrapper's configuration for these settings, with the password read from `passwordFile` by `password`.
    public func mosquittoConfiguration(password: String?) -> MosquittoConfiguration {
        var configuration = MosquittoConfiguration(host: host, port: port, clientID: clientID, cleanSession: false)
        if let username { configuration.credentials = .init(username: username, password: password) }
        if let tls {
            let roots: TLSConfiguration.TrustRoots =
                tls.caFile.map { .caFile($0) } ?? tls.caDirectory.map { .caDirectory($0) } ?? .system
            let certificate = tls.certificateFile.flatMap { certificate in
                tls.keyFile.map { TLSConfiguration.ClientCertificate(certificateFile: certificate, privateKeyFile: $0) }
            }
            configuration.tls = TLSConfiguration(
                trustRoots: roots, clientCertificate: certificate, verifyHostname: tls.verifyHostname)
        }
        return configuration
    }
}
