import Mosquitto
import Testing

@Suite struct ConfigurationTests {
    @Test func persistentSessionNeedsClientID() {
        let configuration = MosquittoConfiguration(cleanSession: false)
        #expect(
            throws: MosquittoError.invalidConfiguration(
                "a persistent session (clean session off) needs a fixed client id")
        ) {
            try configuration.validate()
        }
    }
}
