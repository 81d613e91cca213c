package benchrun.springwebflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.mongo.MongoReactiveAutoConfiguration;

/**
 * The benchrun "spring-webflux" system under test: Spring Boot WebFlux on Reactor Netty.
 * Boot's own reactive MongoDB auto-configuration is off: the app makes its one client from
 * MONGODB_URL (see {@link Items}), so that an unset variable answers 503 instead of dialling
 * localhost.
 */
@SpringBootApplication(exclude = MongoReactiveAutoConfiguration.class)
public class Application {
    public static void main(String[] args) {
        SpringApplication.run(Application.class, args);
    }
}
