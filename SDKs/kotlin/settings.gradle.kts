// The Kotlin SDK for users' Gradle builds. Not run in this repository (no Gradle, no Maven here): scripts/test-kotlin
// compiles and tests the core library with PyPI's Kotlin compiler instead, and the Android module is not compiled here.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}

dependencyResolutionManagement {
    repositories {
        google()
        mavenCentral()
    }
}

rootProject.name = "lanyard-kotlin"

// The JVM/Android-neutral core: kotlin-stdlib, kotlinx-coroutines-core, kotlinx-serialization-json, nothing else.
include(":lanyard")
// The Android parts (Keystore session store, Credential Manager for Google and passkeys), from lanyard/src/android.
include(":lanyard-android")
