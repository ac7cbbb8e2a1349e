//! The integration tests of tlsbench, one module per area, in one test binary: one link
//! instead of one per file, and their tests share the harness's threads.

mod common;
mod fake_go;
mod net_common;

mod allocators;
mod aws_lc;
mod builds;
mod cli;
mod cold;
mod conformance;
mod contexts;
mod families;
mod faulty_runners;
mod html_report;
mod instructions;
mod io;
mod kubernetes;
mod memory;
mod net;
mod net_peak;
mod net_strace;
mod noise;
mod peers;
mod profile;
mod storage;
mod terminal;
mod threads;
mod threads_pinned;
mod versions;
mod versions_go;
mod versions_netty;
mod versions_openssl111;
mod warm;
mod wolfssl;
