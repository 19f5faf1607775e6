package interop;

import io.aeron.Aeron;
import io.aeron.Publication;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Echo 2.0 wire constants and helpers shared by the interop client and server
 * (see docs/spec/echo2.md sections 1 and 2).
 */
final class Wire
{
    /** The one stream id used on every Echo 2.0 channel. */
    static final int STREAM_ID = 0x2044F002;

    /** Time between two offers of the same message while the publication cannot take it. */
    static final long OFFER_RETRY_NS = TimeUnit.MILLISECONDS.toNanos(20);

    private Wire()
    {
    }

    /** Idle strategy for application loops: a few spins and yields, then parks up to 1 ms. */
    static IdleStrategy appIdle()
    {
        return new BackoffIdleStrategy(
            10, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
    }

    /** Brackets an IPv6 literal for use in an Aeron URI; other hosts are returned as given. */
    static String uriHost(final String host)
    {
        if (host.indexOf(':') >= 0 && !host.startsWith("["))
        {
            return "[" + host + "]";
        }
        return host;
    }

    /** {@code aeron:udp?endpoint=H:P|reliable=true}, with an optional explicit session id. */
    static String endpointUri(final String host, final int port, final Integer sessionId)
    {
        final String base = "aeron:udp?endpoint=" + uriHost(host) + ":" + port + "|reliable=true";
        return sessionId == null ? base : base + "|session-id=" + sessionId;
    }

    /** {@code aeron:udp?control=H:P|control-mode=dynamic|reliable=true}, optional session id. */
    static String controlUri(final String host, final int port, final Integer sessionId)
    {
        final String base = "aeron:udp?control=" + uriHost(host) + ":" + port
            + "|control-mode=dynamic|reliable=true";
        return sessionId == null ? base : base + "|session-id=" + sessionId;
    }

    /** Decodes a message as UTF-8, replacing invalid sequences with U+FFFD. */
    static String decode(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Human-readable name of a negative {@link Publication#offer} result. */
    static String offerResultName(final long result)
    {
        if (result == Publication.NOT_CONNECTED)
        {
            return "NOT_CONNECTED";
        }
        if (result == Publication.BACK_PRESSURED)
        {
            return "BACK_PRESSURED";
        }
        if (result == Publication.ADMIN_ACTION)
        {
            return "ADMIN_ACTION";
        }
        if (result == Publication.CLOSED)
        {
            return "CLOSED";
        }
        if (result == Publication.MAX_POSITION_EXCEEDED)
        {
            return "MAX_POSITION_EXCEEDED";
        }
        return "ERROR(" + result + ")";
    }

    /**
     * Offers one message, retrying transient failures until the deadline.
     *
     * @throws SendFailed if the publication is closed, or the deadline passes
     */
    static void send(final Publication pub, final byte[] message, final long deadlineNs)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(message);
        while (true)
        {
            final long result = pub.offer(buffer, 0, message.length);
            if (result >= 0)
            {
                return;
            }
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED)
            {
                throw new SendFailed("offer failed: " + offerResultName(result));
            }
            if (System.nanoTime() - deadlineNs >= 0)
            {
                throw new SendFailed("offer timed out: " + offerResultName(result));
            }
            LockSupport.parkNanos(OFFER_RETRY_NS);
        }
    }

    /** Sends a text message as UTF-8. */
    static void send(final Publication pub, final String message, final long deadlineNs)
    {
        send(pub, message.getBytes(StandardCharsets.UTF_8), deadlineNs);
    }

    /** A message could not be sent. */
    static final class SendFailed extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        SendFailed(final String message)
        {
            super(message);
        }
    }

    /** An embedded Java media driver plus an Aeron client connected to it. */
    static final class Embedded implements AutoCloseable
    {
        final MediaDriver driver;
        final Aeron aeron;

        private Embedded(final MediaDriver driver, final Aeron aeron)
        {
            this.driver = driver;
            this.aeron = aeron;
        }

        /**
         * Launches a SHARED-mode driver in {@code dir} (deleted on start and shutdown) that never
         * busy-spins, and connects a client to it.
         *
         * @param reserveAllPositive reserve publication session ids [1, 2^31-1] for the application
         */
        static Embedded launch(final String dir, final boolean reserveAllPositive)
        {
            final MediaDriver.Context ctx = new MediaDriver.Context()
                .aeronDirectoryName(dir)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                .termBufferSparseFile(true)
                .threadingMode(ThreadingMode.SHARED)
                .sharedIdleStrategy(appIdle())
                .conductorIdleStrategy(appIdle())
                .senderIdleStrategy(appIdle())
                .receiverIdleStrategy(appIdle())
                .sharedNetworkIdleStrategy(appIdle());
            if (reserveAllPositive)
            {
                ctx.publicationReservedSessionIdLow(1)
                    .publicationReservedSessionIdHigh(Integer.MAX_VALUE);
            }
            final MediaDriver driver = MediaDriver.launch(ctx);
            try
            {
                final Aeron aeron = Aeron.connect(new Aeron.Context()
                    .aeronDirectoryName(driver.aeronDirectoryName())
                    .idleStrategy(new SleepingIdleStrategy(TimeUnit.MILLISECONDS.toNanos(1)))
                    .awaitingIdleStrategy(new SleepingIdleStrategy(TimeUnit.MILLISECONDS.toNanos(1))));
                return new Embedded(driver, aeron);
            }
            catch (final RuntimeException e)
            {
                driver.close();
                throw e;
            }
        }

        @Override
        public void close()
        {
            try
            {
                aeron.close();
            }
            finally
            {
                driver.close();
            }
        }
    }

    /** Minimal stderr logger with a component prefix. */
    static void log(final String who, final String message)
    {
        System.err.println("[" + who + "] " + message);
        System.err.flush();
    }
}
