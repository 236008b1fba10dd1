//! The toolkit service's limits: what a catalog fetch, an import, a
//! composition or a bundle may make the service read, unpack or hold. The
//! engine's own are `workbooks::limits`.

use std::time::Duration;

/// Bytes of one catalog download, and of the wasm taken out of it: stops a
/// row's server from making the host buffer without bound. 128 MiB holds
/// the largest real rows: LLVM's wasm (72 MiB) and the iCE40 tarball with
/// its chip databases (74 MiB).
pub const CATALOG_MAX_BYTES: usize = 128 << 20;

/// Bytes decompressed while looking for a row's entry in a gzip tar or a
/// Debian package: stops a decompression bomb from costing unbounded time
/// (and, for an xz `data.tar`, which is unpacked whole, unbounded memory).
pub const CATALOG_MAX_UNPACKED: u64 = 512 << 20;

/// Files unpacked from one source tree or sysroot: stops an archive of
/// empty files from filling a directory without bound.
pub const CATALOG_MAX_TREE_FILES: usize = 20_000;

/// Memory of each compile or link in the C lane: LLVM holds a whole
/// translation unit and its optimiser state (Lua's `lvm.c` and zstd's
/// `zstd_lazy.c`, the largest, need 50 to 64 MiB at `-O2`); past it, that
/// unit's build fails. At the default engine ceiling, so any engine runs
/// the lane.
pub const C_LANE_MEMORY: usize = 256 << 20;

/// Fuel of each compile or link in the C lane: stops a unit that sends
/// the optimiser into a loop.
pub const C_LANE_FUEL: u64 = 200_000_000_000;

/// Wall-clock budget of each compile or link in the C lane.
pub const C_LANE_UNIT_TIMEOUT: Duration = Duration::from_secs(300);

/// Wall-clock budget of a catalog row's proof line, its first compile
/// included: stops a proof that hangs from holding `catalog prove`.
pub const CATALOG_PROOF_TIMEOUT: Duration = Duration::from_secs(300);

/// Wall-clock budget of one catalog download.
pub const CATALOG_FETCH_TIMEOUT: Duration = Duration::from_secs(300);

/// Files one toolkit import copies: stops a huge folder from being
/// mirrored.
pub const IMPORT_MAX_FILES: usize = 2_000;

/// Bytes one toolkit import copies: stops an import from filling the
/// toolkits root.
pub const IMPORT_MAX_BYTES: u64 = 64 << 20;

/// Bytes of a `.wac` file read for a composition: stops a composition
/// source from making the host buffer without bound.
pub const COMPOSE_MAX_SOURCE_BYTES: usize = 1 << 20;

/// Packages one composition may name: stops a `.wac` file from making the
/// host read and validate components without bound.
pub const COMPOSE_MAX_PACKAGES: usize = 64;

/// Bytes of a bundle's whole content (volumes, page, manifest), packed or
/// restored: stops a `.wbundle` (a zip bomb among them) from making the
/// host write without bound.
pub const BUNDLE_MAX_BYTES: u64 = 512 << 20;

/// Entries in one bundle.
pub const BUNDLE_MAX_ENTRIES: usize = 20_000;

/// Wall-clock budget of one build through the build broker (each lane it
/// runs has its own command budget inside this).
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(120);

/// Memory of the build broker's store: room for two copies of the largest
/// source a lane takes (32 MiB of WAT, the broker's and the commands
/// broker's) and the output it hands back; past it, the build traps.
pub const BUILD_BROKER_MEMORY: usize = 160 << 20;
