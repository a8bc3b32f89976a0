import HubCore
import Testing

/// How a cluster's agents share the sensors: every agent must work out the same answer from the same live agents,
/// and a sensor's partition must never change between versions (agents of two versions share one cluster).
struct ClusterPartitionsTests {
    let partitions = ClusterPartitions.standard

    @Test func aSensorsPartitionIsPinned() {
        // Written down once, from an independent Python rendering of FNV-1a + MurmurHash3's finaliser modulo 24: a
        // change here would send one sensor's messages through two sessions while a cluster is being upgraded.
        let pinned = ["kitchen": 7, "s0001": 21, "zigbee2mqtt/hall door": 11, "": 3]
        let computed = Dictionary(
            uniqueKeysWithValues: pinned.keys.map { ($0, partitions.partition(ofSensorTopic: $0)) })
        #expect(computed == pinned)
    }

    @Test func sensorsSpreadEvenlyOverThePartitions() {
        var counts = [Int](repeating: 0, count: partitions.count)
        for index in 1...24_000 { counts[partitions.partition(ofSensorTopic: "s\(index)")] += 1 }
        // 1,000 a partition on average; a fair hash stays within a few standard deviations (about 31).
        #expect(counts.allSatisfy { (850...1_150).contains($0) }, "\(counts)")
    }

    @Test func everyPartitionHasOneAgentWithinItsShare() {
        for count in 1...9 {
            let agents = (1...count).map { "hub-\($0)" }
            let assignment = partitions.assignment(agents: agents)
            let all = assignment.values.flatMap { $0 }.sorted()
            #expect(all == Array(0..<partitions.count), "\(count) agents: \(assignment)")
            let share = (partitions.count + count - 1) / count
            #expect(assignment.values.allSatisfy { $0.count <= share }, "\(count) agents: \(assignment)")
            #expect(assignment.keys.sorted() == agents.sorted())
        }
        #expect(partitions.assignment(agents: []).isEmpty)
    }

    @Test func theAnswerIsTheSameInAnyOrder() {
        let one = partitions.assignment(agents: ["b", "a", "c"])
        let other = partitions.assignment(agents: ["c", "a", "b", "a"])
        #expect(one == other)
    }

    @Test func anAgentThatGoesMovesOnlyWhatItHeldAndLittleElse() {
        let three = partitions.assignment(agents: ["hub-1", "hub-2", "hub-3"])
        let two = partitions.assignment(agents: ["hub-1", "hub-3"])
        // What hub-2 held has to move; of the others' 16, bounded loads may move a few, not most.
        let kept = ["hub-1", "hub-3"].map { Set(three[$0]!).intersection(two[$0]!).count }.reduce(0, +)
        #expect(kept >= 12, "kept \(kept) of 16: \(three) → \(two)")
    }

    @Test func dutiesNameTheirPartitions() {
        #expect(ClusterPartitions.duty(3) == "partition:03")
        #expect(ClusterPartitions.duty(17) == "partition:17")
        #expect(ClusterPartitions.partition(ofDuty: "partition:03") == 3)
        #expect(ClusterPartitions.partition(ofDuty: "silence") == nil)
    }
}
