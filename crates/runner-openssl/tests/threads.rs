//! Threads that share one client config and one server config (`sample --threads N --contexts
//! shared`), for every stack of this family that resumes and across stacks: a session made on
//! one thread resumes on another, every measured handshake resumes, and the configs are built
//! once per sample (see `testing::check_shared_contexts`).

use tlsbench_harness::testing::check_shared_contexts;
use tlsbench_stack_gnutls::GnuTls;
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_rustls::Rustls;
use tlsbench_stack_s2n::S2n;

#[test]
fn threads_sharing_configs_resume_each_other_s_sessions() {
    let (aws, ring) = (Rustls::aws_lc_rs(), Rustls::ring());
    // Session IDs and tickets, in TLS 1.2 and 1.3.
    assert_eq!(check_shared_contexts(&OpenSsl, &OpenSsl), 3);
    assert_eq!(check_shared_contexts(&aws, &aws), 3);
    assert_eq!(check_shared_contexts(&ring, &ring), 3);
    assert_eq!(check_shared_contexts(&GnuTls, &GnuTls), 3);
    assert_eq!(check_shared_contexts(&aws, &OpenSsl), 3);
    assert_eq!(check_shared_contexts(&OpenSsl, &ring), 3);
    // s2n-tls has no session cache: tickets only.
    assert_eq!(check_shared_contexts(&S2n::new(), &S2n::new()), 2);
}
