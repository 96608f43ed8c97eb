// Plugin versions for both modules. Kotlin 2.2 compiles kotlinx-serialization 1.9; the code itself is held to
// language and API version 2.1 (as scripts/test-kotlin compiles it), so apps on Kotlin 2.1 can use it.
plugins {
    kotlin("jvm") version "2.2.0" apply false
    kotlin("android") version "2.2.0" apply false
    kotlin("plugin.serialization") version "2.2.0" apply false
    id("com.android.library") version "8.10.1" apply false
}
