-- auth.users and auth.identities as supabase/auth's migrations leave them (github.com/supabase/auth, migrations/,
-- every file through 20260625000000_add_custom_claims_allowlist.up.sql), trimmed to what an importer's test needs:
-- the columns in their order and types, the keys, the identities -> users foreign key, the unique constraints and
-- GoTrue's indexes on these two tables. Left out: the other auth tables, the auth.uid()/auth.role() functions,
-- row level security and the grants to Supabase's roles (20240612123726), comments.
-- Runs on PostgreSQL 13 or later (gen_random_uuid) after nothing but: CREATE SCHEMA auth;
-- The users are invented; Tests/Fixtures/imports/supabase-users.json is this file's rows, read back with the query
-- in docs/import-formats.md.

CREATE TABLE auth.users (
    instance_id uuid NULL,                                  -- 00_init_auth_schema
    id uuid NOT NULL UNIQUE,
    aud varchar(255) NULL,
    "role" varchar(255) NULL,
    email varchar(255) NULL,                                -- its UNIQUE dropped by 20221215195500
    encrypted_password varchar(255) NULL,
    email_confirmed_at timestamptz NULL,                    -- confirmed_at, renamed by 20210710035447
    invited_at timestamptz NULL,
    confirmation_token varchar(255) NULL,
    confirmation_sent_at timestamptz NULL,
    recovery_token varchar(255) NULL,
    recovery_sent_at timestamptz NULL,
    email_change_token_new varchar(255) NULL,               -- email_change_token, renamed by 20210730183235
    email_change varchar(255) NULL,
    email_change_sent_at timestamptz NULL,
    last_sign_in_at timestamptz NULL,
    raw_app_meta_data jsonb NULL,
    raw_user_meta_data jsonb NULL,
    is_super_admin bool NULL,
    created_at timestamptz NULL,
    updated_at timestamptz NULL,
    phone text NULL UNIQUE DEFAULT NULL,                    -- 20210710035447; varchar(15) until 20230116124310
    phone_confirmed_at timestamptz NULL DEFAULT NULL,
    phone_change text NULL DEFAULT '',
    phone_change_token varchar(255) NULL DEFAULT '',
    phone_change_sent_at timestamptz NULL DEFAULT NULL,
    confirmed_at timestamptz GENERATED ALWAYS AS (LEAST(email_confirmed_at, phone_confirmed_at)) STORED, -- 20210722035447
    email_change_token_current varchar(255) NULL DEFAULT '', -- 20210730183235
    email_change_confirm_status smallint DEFAULT 0 CHECK (email_change_confirm_status >= 0 AND email_change_confirm_status <= 2),
    banned_until timestamptz NULL,                          -- 20220114185340
    reauthentication_token varchar(255) NULL DEFAULT '',    -- 20220323170000
    reauthentication_sent_at timestamptz NULL DEFAULT NULL,
    is_sso_user boolean NOT NULL DEFAULT false,             -- 20221215195500
    deleted_at timestamptz NULL,                            -- 20230116124412
    is_anonymous boolean NOT NULL DEFAULT false,            -- 20240214120130
    CONSTRAINT users_pkey PRIMARY KEY (id)
);
CREATE INDEX users_instance_id_idx ON auth.users USING btree (instance_id);
CREATE INDEX users_instance_id_email_idx ON auth.users USING btree (instance_id, lower(email)); -- 20220114185221
CREATE UNIQUE INDEX confirmation_token_idx ON auth.users USING btree (confirmation_token) WHERE confirmation_token !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX recovery_token_idx ON auth.users USING btree (recovery_token) WHERE recovery_token !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX email_change_token_current_idx ON auth.users USING btree (email_change_token_current) WHERE email_change_token_current !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX email_change_token_new_idx ON auth.users USING btree (email_change_token_new) WHERE email_change_token_new !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX reauthentication_token_idx ON auth.users USING btree (reauthentication_token) WHERE reauthentication_token !~ '^[0-9 ]*$';
CREATE UNIQUE INDEX users_email_partial_key ON auth.users (email) WHERE (is_sso_user = false);          -- 20221215195500
CREATE INDEX users_is_anonymous_idx ON auth.users USING btree (is_anonymous);                         -- 20240214120130

CREATE TABLE auth.identities (
    provider_id text NOT NULL,                              -- id, renamed by 20231117164230
    user_id uuid NOT NULL,
    identity_data jsonb NOT NULL,
    provider text NOT NULL,
    last_sign_in_at timestamptz NULL,
    created_at timestamptz NULL,
    updated_at timestamptz NULL,
    email text GENERATED ALWAYS AS (lower(identity_data->>'email')) STORED, -- 20221215195800
    id uuid DEFAULT gen_random_uuid(),                      -- 20231117164230 (the old (provider, id) key dropped)
    CONSTRAINT identities_pkey PRIMARY KEY (id),
    CONSTRAINT identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE,
    CONSTRAINT identities_provider_id_provider_unique UNIQUE (provider_id, provider)
);
CREATE INDEX identities_user_id_idx ON auth.identities USING btree (user_id);                         -- 20211122151130
CREATE INDEX identities_email_idx ON auth.identities (email text_pattern_ops);                        -- 20221215195800

-- Nine invented users: Apple; Google; Google then Apple linked; a magic-link (verified email) user; an unverified
-- password user; a verified password user whose ban has run out; an anonymous user; a banned Google user; Microsoft (azure).
-- Timestamps are written in UTC.

INSERT INTO auth.users (instance_id, id, aud, "role", email, encrypted_password, email_confirmed_at, invited_at, confirmation_token, confirmation_sent_at, recovery_token, recovery_sent_at, email_change_token_new, email_change, email_change_sent_at, last_sign_in_at, raw_app_meta_data, raw_user_meta_data, is_super_admin, created_at, updated_at, phone, phone_confirmed_at, phone_change, phone_change_token, phone_change_sent_at, email_change_token_current, email_change_confirm_status, banned_until, reauthentication_token, reauthentication_sent_at, is_sso_user, deleted_at, is_anonymous) VALUES
('00000000-0000-0000-0000-000000000000', '32833106-536e-45df-80b2-d002cc92d33d', 'authenticated', 'authenticated', 'k7q2m9xp4d@privaterelay.appleid.com', '', '2024-02-11 08:14:05.221+00', NULL, '', NULL, '', NULL, '', '', NULL, '2025-09-30 19:02:47.913+00', '{"provider": "apple", "providers": ["apple"]}', '{"iss": "https://appleid.apple.com", "sub": "001234.5f2c9e0a7b1d4c3e8f6a2b9d0c1e7f45.1012", "email": "k7q2m9xp4d@privaterelay.appleid.com", "provider_id": "001234.5f2c9e0a7b1d4c3e8f6a2b9d0c1e7f45.1012", "custom_claims": {"auth_time": 1759258967, "is_private_email": true}, "email_verified": true, "phone_verified": false}', NULL, '2024-02-11 08:14:05.221+00', '2025-09-30 19:02:47.913+00', NULL, NULL, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, false),
('00000000-0000-0000-0000-000000000000', 'f08db22f-d293-456a-b170-fab23d90fbac', 'authenticated', 'authenticated', 'bruno.okafor@example.com', '', '2023-11-03 16:40:12.008+00', NULL, '', NULL, '', NULL, '', '', NULL, '2025-10-02 07:55:31.540+00', '{"provider": "google", "providers": ["google"]}', '{"iss": "https://accounts.google.com", "sub": "104918273645091827364", "name": "Bruno Okafor", "email": "bruno.okafor@example.com", "picture": "https://lh3.googleusercontent.com/a/xQPplH8ACyjkz4jmBQlm7knI4pShZFC8ZrXbeg_f=s96-c", "full_name": "Bruno Okafor", "avatar_url": "https://lh3.googleusercontent.com/a/xQPplH8ACyjkz4jmBQlm7knI4pShZFC8ZrXbeg_f=s96-c", "provider_id": "104918273645091827364", "email_verified": true, "phone_verified": false}', NULL, '2023-11-03 16:40:12.008+00', '2025-10-02 07:55:31.540+00', NULL, NULL, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, false),
('00000000-0000-0000-0000-000000000000', 'f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c', 'authenticated', 'authenticated', 'chiara.bellini@example.org', '', '2024-05-20 12:00:45.777+00', NULL, '', NULL, '', NULL, '', '', NULL, '2025-10-01 21:13:09.102+00', '{"plan": "pro", "provider": "google", "providers": ["google", "apple"]}', '{"iss": "https://appleid.apple.com", "sub": "000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917", "name": "Chiara Bellini", "email": "chiara.bellini@example.org", "picture": "https://lh3.googleusercontent.com/a/T3pG-h8msMlc-T1ah9sdbEl7oX8nrEHAluvtdgDW=s96-c", "full_name": "Chiara Bellini", "avatar_url": "https://lh3.googleusercontent.com/a/T3pG-h8msMlc-T1ah9sdbEl7oX8nrEHAluvtdgDW=s96-c", "provider_id": "000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917", "email_verified": true, "phone_verified": false, "custom_claims": {"auth_time": 1717352710, "is_private_email": false}, "locale": "it"}', NULL, '2024-05-20 12:00:45.777+00', '2025-10-01 21:13:09.102+00', NULL, NULL, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, false),
('00000000-0000-0000-0000-000000000000', '3ce1268c-9c80-42e3-bfec-3fee8ed2305d', 'authenticated', 'authenticated', 'dev.raman@example.net', '', '2024-08-14 09:32:01.415+00', NULL, '', '2024-08-14 09:30:27.415+00', '', NULL, '', '', NULL, '2025-06-18 14:22:51.006+00', '{"provider": "email", "providers": ["email"]}', '{"sub": "3ce1268c-9c80-42e3-bfec-3fee8ed2305d", "email": "dev.raman@example.net", "email_verified": true, "phone_verified": false}', NULL, '2024-08-14 09:30:27.415+00', '2025-06-18 14:22:51.006+00', NULL, NULL, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, false),
('00000000-0000-0000-0000-000000000000', 'a93f32a9-a172-4102-8e4e-dc90253d9e30', 'authenticated', 'authenticated', 'elif.kaya@example.com', '$2a$10$NkJnsrUgBhcpqIuRhWlMkU6ag5t/Zj3aoeWqeHGwlifXjw9APP8Dy', NULL, NULL, 'fdc6c369aad6b68b75b48e99f73f289509dddc3ebffc5ccd8099ee02', '2025-03-07 22:41:19.334+00', '', NULL, '', '', NULL, NULL, '{"provider": "email", "providers": ["email"]}', '{"sub": "a93f32a9-a172-4102-8e4e-dc90253d9e30", "email": "elif.kaya@example.com", "email_verified": false, "phone_verified": false, "display_name": "Elif Kaya"}', NULL, '2025-03-07 22:41:19.334+00', '2025-03-07 22:41:19.334+00', NULL, NULL, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, false),
('00000000-0000-0000-0000-000000000000', '47aa2dba-d9e2-4c8d-809f-001680289e32', 'authenticated', 'authenticated', 'farid.haddad@example.org', '$2a$10$VIoSTsp5svg/LRTlGrwQ2d8m3Dze9n2cldhT.7JZjyUDevwBJSMgl', '2023-06-29 05:17:56.900+00', NULL, '', '2023-06-29 05:12:44.900+00', '', NULL, '', '', NULL, '2025-09-12 11:47:03.268+00', '{"provider": "email", "providers": ["email"]}', '{"sub": "47aa2dba-d9e2-4c8d-809f-001680289e32", "email": "farid.haddad@example.org", "email_verified": true, "phone_verified": false, "display_name": "Farid Haddad", "newsletter": true}', NULL, '2023-06-29 05:12:44.900+00', '2025-09-12 11:47:03.268+00', NULL, NULL, '', '', NULL, '', 0, '2025-01-15 00:00:00.000+00', '', NULL, false, NULL, false),
('00000000-0000-0000-0000-000000000000', '7f453a0e-f509-4b4f-95de-6e91074206e2', 'authenticated', 'authenticated', NULL, '', NULL, NULL, '', NULL, '', NULL, '', '', NULL, '2025-10-02 06:30:18.045+00', '{}', '{}', NULL, '2025-09-28 17:05:33.712+00', '2025-10-02 06:30:18.045+00', NULL, NULL, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, true),
('00000000-0000-0000-0000-000000000000', '30f47f35-d038-4cfb-8add-40e92c34bf1c', 'authenticated', 'authenticated', 'hana.sato@example.net', '', '2024-01-09 10:20:30.405+00', NULL, '', NULL, '', NULL, '', '', NULL, '2025-04-30 08:08:08.808+00', '{"provider": "google", "providers": ["google"], "role": "moderator"}', '{"iss": "https://accounts.google.com", "sub": "112093847561029384756", "name": "Hana Sato", "email": "hana.sato@example.net", "picture": "https://lh3.googleusercontent.com/a/1-In81LJK6yc-jecsblnAk2vnXK6-Zy2GKlPOyJV=s96-c", "full_name": "Hana Sato", "avatar_url": "https://lh3.googleusercontent.com/a/1-In81LJK6yc-jecsblnAk2vnXK6-Zy2GKlPOyJV=s96-c", "provider_id": "112093847561029384756", "email_verified": true, "phone_verified": false}', NULL, '2024-01-09 10:20:30.405+00', '2025-05-02 09:09:12.000+00', NULL, NULL, '', '', NULL, '', 0, '2125-04-06 08:09:12.000+00', '', NULL, false, NULL, false),
('00000000-0000-0000-0000-000000000000', '63783933-d5f0-4510-bf6a-f8af81df6383', 'authenticated', 'authenticated', 'ivo.novak@example.com', '', '2024-10-22 13:37:21.650+00', NULL, '', NULL, '', NULL, '', '', NULL, '2025-09-25 16:44:12.019+00', '{"provider": "azure", "providers": ["azure"]}', '{"iss": "https://login.microsoftonline.com/3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9/v2.0", "sub": "AAAAAAAAAAAAAAAAAAAAAGx7Qp3LmN0vR2sT9wYbZcU", "name": "Ivo Novak", "email": "ivo.novak@example.com", "full_name": "Ivo Novak", "provider_id": "AAAAAAAAAAAAAAAAAAAAAGx7Qp3LmN0vR2sT9wYbZcU", "custom_claims": {"email": "ivo.novak@example.com", "oid": "7c1e2f3a-4b5d-4e6f-9a0b-1c2d3e4f5a6b", "tid": "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9"}, "email_verified": true, "phone_verified": false, "preferred_username": "ivo.novak@example.com"}', NULL, '2024-10-22 13:37:21.650+00', '2025-09-25 16:44:12.019+00', NULL, NULL, '', '', NULL, '', 0, NULL, '', NULL, false, NULL, false);

INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at, id) VALUES
('001234.5f2c9e0a7b1d4c3e8f6a2b9d0c1e7f45.1012', '32833106-536e-45df-80b2-d002cc92d33d', '{"iss": "https://appleid.apple.com", "sub": "001234.5f2c9e0a7b1d4c3e8f6a2b9d0c1e7f45.1012", "email": "k7q2m9xp4d@privaterelay.appleid.com", "provider_id": "001234.5f2c9e0a7b1d4c3e8f6a2b9d0c1e7f45.1012", "custom_claims": {"auth_time": 1759258967, "is_private_email": true}, "email_verified": true, "phone_verified": false}', 'apple', '2025-09-30 19:02:47.913+00', '2024-02-11 08:14:05.221+00', '2025-09-30 19:02:47.913+00', 'ae5ff3c3-fff2-476c-b980-1004c13e2e1a'),
('104918273645091827364', 'f08db22f-d293-456a-b170-fab23d90fbac', '{"iss": "https://accounts.google.com", "sub": "104918273645091827364", "name": "Bruno Okafor", "email": "bruno.okafor@example.com", "picture": "https://lh3.googleusercontent.com/a/xQPplH8ACyjkz4jmBQlm7knI4pShZFC8ZrXbeg_f=s96-c", "full_name": "Bruno Okafor", "avatar_url": "https://lh3.googleusercontent.com/a/xQPplH8ACyjkz4jmBQlm7knI4pShZFC8ZrXbeg_f=s96-c", "provider_id": "104918273645091827364", "email_verified": true, "phone_verified": false}', 'google', '2025-10-02 07:55:31.540+00', '2023-11-03 16:40:12.008+00', '2025-10-02 07:55:31.540+00', 'c488e594-bfce-453f-bc2a-621c7a62f70c'),
('117650938271640593827', 'f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c', '{"iss": "https://accounts.google.com", "sub": "117650938271640593827", "name": "Chiara Bellini", "email": "chiara.bellini@example.org", "picture": "https://lh3.googleusercontent.com/a/T3pG-h8msMlc-T1ah9sdbEl7oX8nrEHAluvtdgDW=s96-c", "full_name": "Chiara Bellini", "avatar_url": "https://lh3.googleusercontent.com/a/T3pG-h8msMlc-T1ah9sdbEl7oX8nrEHAluvtdgDW=s96-c", "provider_id": "117650938271640593827", "email_verified": true, "phone_verified": false}', 'google', '2025-10-01 21:13:09.102+00', '2024-05-20 12:00:45.777+00', '2025-10-01 21:13:09.102+00', '64d53a7e-8640-4f8c-a7cd-0ba1c7fbe4f7'),
('000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917', 'f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c', '{"iss": "https://appleid.apple.com", "sub": "000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917", "email": "chiara.bellini@example.org", "provider_id": "000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917", "custom_claims": {"auth_time": 1717352710, "is_private_email": false}, "email_verified": true, "phone_verified": false}', 'apple', '2024-06-02 18:25:10.440+00', '2024-06-02 18:25:10.440+00', '2024-06-02 18:25:10.440+00', 'f81c2841-6681-42ee-88d4-2688811b6c22'),
('3ce1268c-9c80-42e3-bfec-3fee8ed2305d', '3ce1268c-9c80-42e3-bfec-3fee8ed2305d', '{"sub": "3ce1268c-9c80-42e3-bfec-3fee8ed2305d", "email": "dev.raman@example.net", "email_verified": true, "phone_verified": false}', 'email', '2025-06-18 14:22:51.006+00', '2024-08-14 09:30:27.415+00', '2025-06-18 14:22:51.006+00', 'f86e2c6c-60e7-4e3c-8141-a7a5de5799ac'),
('a93f32a9-a172-4102-8e4e-dc90253d9e30', 'a93f32a9-a172-4102-8e4e-dc90253d9e30', '{"sub": "a93f32a9-a172-4102-8e4e-dc90253d9e30", "email": "elif.kaya@example.com", "email_verified": false, "phone_verified": false, "display_name": "Elif Kaya"}', 'email', NULL, '2025-03-07 22:41:19.334+00', '2025-03-07 22:41:19.334+00', 'd7ec5d61-8fd5-4fc1-a018-d089bf1d11a0'),
('47aa2dba-d9e2-4c8d-809f-001680289e32', '47aa2dba-d9e2-4c8d-809f-001680289e32', '{"sub": "47aa2dba-d9e2-4c8d-809f-001680289e32", "email": "farid.haddad@example.org", "email_verified": true, "phone_verified": false, "display_name": "Farid Haddad"}', 'email', '2025-09-12 11:47:03.268+00', '2023-06-29 05:12:44.900+00', '2025-09-12 11:47:03.268+00', 'f8aeb55c-e80c-4562-94a2-5ef46366b13f'),
('112093847561029384756', '30f47f35-d038-4cfb-8add-40e92c34bf1c', '{"iss": "https://accounts.google.com", "sub": "112093847561029384756", "name": "Hana Sato", "email": "hana.sato@example.net", "picture": "https://lh3.googleusercontent.com/a/1-In81LJK6yc-jecsblnAk2vnXK6-Zy2GKlPOyJV=s96-c", "full_name": "Hana Sato", "avatar_url": "https://lh3.googleusercontent.com/a/1-In81LJK6yc-jecsblnAk2vnXK6-Zy2GKlPOyJV=s96-c", "provider_id": "112093847561029384756", "email_verified": true, "phone_verified": false}', 'google', '2025-04-30 08:08:08.808+00', '2024-01-09 10:20:30.405+00', '2025-04-30 08:08:08.808+00', 'a36e4eb8-5db8-40da-b044-bfaf859f0f43'),
('AAAAAAAAAAAAAAAAAAAAAGx7Qp3LmN0vR2sT9wYbZcU', '63783933-d5f0-4510-bf6a-f8af81df6383', '{"iss": "https://login.microsoftonline.com/3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9/v2.0", "sub": "AAAAAAAAAAAAAAAAAAAAAGx7Qp3LmN0vR2sT9wYbZcU", "name": "Ivo Novak", "email": "ivo.novak@example.com", "full_name": "Ivo Novak", "provider_id": "AAAAAAAAAAAAAAAAAAAAAGx7Qp3LmN0vR2sT9wYbZcU", "custom_claims": {"email": "ivo.novak@example.com", "oid": "7c1e2f3a-4b5d-4e6f-9a0b-1c2d3e4f5a6b", "tid": "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9"}, "email_verified": true, "phone_verified": false, "preferred_username": "ivo.novak@example.com"}', 'azure', '2025-09-25 16:44:12.019+00', '2024-10-22 13:37:21.650+00', '2025-09-25 16:44:12.019+00', '7ab0e583-a893-40d8-b496-829673385f84');
