// The Android parts of the Kotlin SDK: KeystoreSessionStore, Credential Manager for Google sign-in and passkeys,
// Custom Tabs for redirect sign-in.
// Their sources live beside the core's, in ../lanyard/src/android/kotlin. Not compiled in this repository (no
// android.jar, no androidx here); written against the documented APIs of the versions below.
plugins {
    id("com.android.library")
    kotlin("android")
}

group = "dev.lanyard"
version = "0.8.0"

android {
    namespace = "dev.lanyard.android"
    compileSdk = 35

    defaultConfig {
        minSdk = 26
    }

    sourceSets {
        getByName("main") {
            java.srcDir("../lanyard/src/android/kotlin")
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_11
        targetCompatibility = JavaVersion.VERSION_11
    }
}

kotlin {
    compilerOptions {
        jvmTarget.set(org.jetbrains.kotlin.gradle.dsl.JvmTarget.JVM_11)
    }
}

dependencies {
    api(project(":lanyard"))
    // Credential Manager, with Play services for devices up to Android 13.
    implementation("androidx.credentials:credentials:1.5.0")
    implementation("androidx.credentials:credentials-play-services-auth:1.5.0")
    // Sign in with Google's credential types (GetGoogleIdOption, GoogleIdTokenCredential).
    implementation("com.google.android.libraries.identity.googleid:googleid:1.1.1")
    // Custom Tabs, for redirect sign-in (CustomTabsRedirectSignIn).
    implementation("androidx.browser:browser:1.8.0")
}
