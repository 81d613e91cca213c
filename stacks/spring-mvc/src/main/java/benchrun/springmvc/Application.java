package benchrun.springmvc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.mongo.MongoAutoConfiguration;

/**
 * The benchrun "spring-mvc" system under test: Spring Boot MVC on embedded Tomcat.
 * Boot's own MongoDB auto-configuration is off: the app makes its one client from MONGODB_URL
 * (see {@link Items}), so that an unset variable answers 503 instead of dialling localhost.
 */
@SpringBootApplication(exclude = MongoAutoConfiguration.class)
public class Application {
    public static void main(String[] args) {
        SpringApplication.run(Application.class, args);
    }
}
