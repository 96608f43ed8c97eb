// The core library: pure Kotlin on the JVM (bytecode 11), usable on Android and on a server.
// Not run in this repository; scripts/test-kotlin compiles the same sources against the same three dependencies.
import org.jetbrains.kotlin.gradle.dsl.JvmTarget
import org.jetbrains.kotlin.gradle.dsl.KotlinVersion

plugins {
    kotlin("jvm")
    kotlin("plugin.serialization")
    `java-library`
}

group = "dev.lanyard"
version = "0.8.0"

java {
    sourceCompatibility = JavaVersion.VERSION_11
    targetCompatibility = JavaVersion.VERSION_11
    withSourcesJar()
}

kotlin {
    compilerOptions {
        jvmTarget.set(JvmTarget.JVM_11)
        languageVersion.set(KotlinVersion.KOTLIN_2_1)
        apiVersion.set(KotlinVersion.KOTLIN_2_1)
    }
}

// The JVM library is src/main/kotlin alone (the plugin's default); src/android is built by :lanyard-android.

dependencies {
    api("org.jetbrains.kotlinx:kotlinx-coroutines-core:1.10.2")
    api("org.jetbrains.kotlinx:kotlinx-serialization-json:1.9.0")

    testImplementation(platform("org.junit:junit-bom:5.9.2"))
    testImplementation("org.junit.jupiter:junit-jupiter")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
}

tasks.test {
    useJUnitPlatform()
    // The tests start `lanyard dev`: the binary at LANYARD_BINARY, else the repository's .build/debug/lanyard.
    workingDir = rootDir.parentFile.parentFile
}
