-- people names everyone a flag's creation or change is attributed to: a
-- user, an access token or a flag trigger, with the name and the email the
-- pages and the API show for each (a token's email is "Access token", a
-- trigger's "Trigger"). Triggers on the three tables keep it, so this is the
-- one place that names them, and a flag list finds each flag's creator and
-- last changer with one index lookup instead of three.
CREATE TABLE people (
    id    uuid PRIMARY KEY,
    name  text NOT NULL,
    email text NOT NULL
);

CREATE FUNCTION bunting_keep_person() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    person_name  text;
    person_email text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM people WHERE id = OLD.id;
        RETURN NULL;
    END IF;
    -- PL/pgSQL plans a branch only when it runs, so each table's branch may
    -- read columns the other tables lack.
    IF TG_TABLE_NAME = 'users' THEN
        person_name := NEW.name;
        person_email := NEW.email;
    ELSIF TG_TABLE_NAME = 'access_tokens' THEN
        person_name := NEW.name;
        person_email := 'Access token';
    ELSE
        person_name := CASE WHEN NEW.description = '' THEN 'Trigger ' || NEW.token_preview || '…'
            ELSE 'Trigger “' || NEW.description || '”' END;
        person_email := 'Trigger';
    END IF;
    INSERT INTO people (id, name, email) VALUES (NEW.id, person_name, person_email)
    ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email;
    RETURN NULL;
END;
$$;

CREATE TRIGGER users_people AFTER INSERT OR DELETE OR UPDATE OF name, email ON users
    FOR EACH ROW EXECUTE FUNCTION bunting_keep_person();
CREATE TRIGGER access_tokens_people AFTER INSERT OR DELETE OR UPDATE OF name ON access_tokens
    FOR EACH ROW EXECUTE FUNCTION bunting_keep_person();
CREATE TRIGGER flag_triggers_people AFTER INSERT OR DELETE OR UPDATE OF description, token_preview ON flag_triggers
    FOR EACH ROW EXECUTE FUNCTION bunting_keep_person();

INSERT INTO people (id, name, email)
SELECT id, name, email FROM users
UNION ALL SELECT id, name, 'Access token' FROM access_tokens
UNION ALL SELECT id, CASE WHEN description = '' THEN 'Trigger ' || token_preview || '…'
    ELSE 'Trigger “' || description || '”' END, 'Trigger' FROM flag_triggers;
