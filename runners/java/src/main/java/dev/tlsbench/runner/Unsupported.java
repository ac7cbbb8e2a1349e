package dev.tlsbench.runner;

/** The stack or runner cannot do what was asked: replied as {@code unsupported} with the reason, never replaced. */
public final class Unsupported extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Unsupported(String reason) {
        super(reason, null, false, false);
    }
}
