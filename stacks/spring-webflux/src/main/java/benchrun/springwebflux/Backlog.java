package benchrun.springwebflux;

import io.netty.channel.ChannelOption;
import io.netty.util.NetUtil;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * The listen backlog (accept queue) of the Reactor Netty server: {@code NETTY_SO_BACKLOG} in the
 * environment sets Netty's {@code SO_BACKLOG}; unset or 0 keeps Netty's default, the kernel's
 * {@code net.core.somaxconn} as Netty read it at start ({@link NetUtil#SOMAXCONN}). Seed 5 varies
 * it beside Tomcat's {@code server.tomcat.accept-count} (default 100) to see whether the two
 * servers' accept queues explain the difference in connect times. The kernel caps any value at
 * the pod's {@code somaxconn}.
 */
@Component
class Backlog implements WebServerFactoryCustomizer<NettyReactiveWebServerFactory> {
    private final int configured;

    Backlog(@Value("${NETTY_SO_BACKLOG:0}") int configured) {
        if (configured < 0 || configured > 65535) {
            throw new IllegalArgumentException("NETTY_SO_BACKLOG must be 0 (Netty's default) to 65535, not " + configured);
        }
        this.configured = configured;
    }

    /** The backlog the server listens with. */
    int effective() {
        return configured > 0 ? configured : NetUtil.SOMAXCONN;
    }

    /** Whether the backlog was set ({@code NETTY_SO_BACKLOG}) rather than Netty's default. */
    boolean isSet() {
        return configured > 0;
    }

    @Override
    public void customize(NettyReactiveWebServerFactory factory) {
        if (configured > 0) {
            factory.addServerCustomizers(server -> server.option(ChannelOption.SO_BACKLOG, configured));
        }
    }
}
