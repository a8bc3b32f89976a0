#if canImport(Glibc)
    import Glibc
#endif

/// Gives memory freed after a large piece of work back to the system.
///
/// glibc keeps what a program frees for its next allocations, in one arena per thread that allocated, and raises
/// the size it maps separately each time a large block is freed: after reading and writing a registry of 100,000
/// sensors (tens of megabytes, gone once written), hubd's resident memory stayed at the peak. `malloc_trim` returns
/// the free pages of every arena; it walks them, so it is for after large work, not for every message.
public enum FreedMemory {
    /// Registries at least this large (in bytes) are worth a trim after they were read or written.
    public static let worthReleasingAfter = 1 << 20

    public static func release() {
        #if canImport(Glibc)
            _ = trim?(0)
        #endif
    }

    /// Has glibc map every block of 128 KiB or more on its own, and so unmap it when it is freed, and keep at most
    /// two arenas. By default the threshold rises to the size of each large block freed (up to 32 MiB), so a
    /// registry read once left every later buffer of that size in an arena for good. Measured with 100,000 sensors
    /// after a status each (`bench/hub.sh`, scale): 148 MiB resident with 38 MiB in use; 42 MiB with these. Call it
    /// first thing, before threads allocate.
    public static func returnLargeBlocks() {
        #if canImport(Glibc)
            _ = option?(-3, 128 * 1024)  // M_MMAP_THRESHOLD
            _ = option?(-8, 2)  // M_ARENA_MAX
        #endif
    }

    #if canImport(Glibc)
        /// glibc's `mallopt`, declared like `malloc_trim` below.
        private static let option: (@convention(c) (Int32, Int32) -> Int32)? = dlsym(
            UnsafeMutableRawPointer(bitPattern: 0), "mallopt"
        ).map { unsafeBitCast($0, to: (@convention(c) (Int32, Int32) -> Int32).self) }

        /// glibc's `malloc_trim`, which Swift's Glibc module does not declare (it is in `<malloc.h>`); `nil` on a C
        /// library without it.
        private static let trim: (@convention(c) (Int) -> Int32)? = dlsym(
            UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim"
        )
        .map { unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self) }
    #endif
}
