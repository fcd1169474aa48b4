//! People: the answerers of an inbox, and the devices bound to them.

use async_trait::async_trait;
use sqlx::query::Query;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::domain::people::Person;
use crate::storage::rows::{
    At, Id, PersonRow, changed_any, person_name_taken, store_error, store_error_or, to_ms_precision,
};
use crate::storage::{People, StoreError};

for_both_stores! {
    #[async_trait]
    impl People for Backend {
        async fn add_person(&self, p: &Person) -> Result<(), StoreError> {
            let insert = sqlx::query(
                "INSERT INTO people (id, inbox_id, name, email, ntfy_url, ntfy_token, slack_user, \
                 matrix_user, telegram_chat, quiet_hours, quiet_tz, lang, created_at) \
                 SELECT $1, id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM inboxes \
                 WHERE id = $13",
            )
            .bind(Id(p.id))
            .bind(&p.name);
            bind_settings(insert, p)
                .bind(At(to_ms_precision(p.created_at)))
                .bind(Id(p.inbox_id))
                .execute(self.writes())
                .await
                .map_err(|e| store_error_or(e, || person_name_taken(&p.name)))
                .and_then(|r| changed_any(r.rows_affected()))
        }

        async fn person(&self, person: Uuid) -> Result<Option<Person>, StoreError> {
            sqlx::query_as::<_, PersonRow>(concat!(
                "SELECT ",
                person_columns!(),
                " FROM people p WHERE p.id = $1"
            ))
            .bind(Id(person))
            .fetch_optional(self.reads())
            .await
            .map_err(store_error)?
            .map(Person::try_from)
            .transpose()
        }

        async fn people(&self, inbox: Uuid) -> Result<Vec<Person>, StoreError> {
            sqlx::query_as::<_, PersonRow>(concat!(
                "SELECT ",
                person_columns!(),
                " FROM people p WHERE p.inbox_id = $1 ORDER BY p.created_at, p.id"
            ))
            .bind(Id(inbox))
            .fetch_all(self.reads())
            .await
            .map_err(store_error)?
            .into_iter()
            .map(Person::try_from)
            .collect()
        }

        async fn update_person(&self, p: &Person) -> Result<(), StoreError> {
            let mut tx = self.begin_write().await?;
            let update = sqlx::query(
                "UPDATE people SET email = $1, ntfy_url = $2, ntfy_token = $3, slack_user = $4, \
                 matrix_user = $5, telegram_chat = $6, quiet_hours = $7, quiet_tz = $8, \
                 lang = $9 WHERE id = $10",
            );
            bind_settings(update, p)
                .bind(Id(p.id))
                .execute(&mut *tx)
                .await
                .map_err(store_error)
                .and_then(|r| changed_any(r.rows_affected()))?;
            // The inbox's own person's channels are the inbox's (a no-op for anyone else).
            sqlx::query(
                "UPDATE inboxes SET email = $1, ntfy_url = $2, ntfy_token = $3 WHERE id = $4",
            )
            .bind(&p.email)
            .bind(&p.ntfy_url)
            .bind(&p.ntfy_token)
            .bind(Id(p.id))
            .execute(&mut *tx)
            .await
            .map_err(store_error)?;
            tx.commit().await.map_err(store_error)
        }

        async fn rename_person(&self, person: Uuid, name: &str) -> Result<bool, StoreError> {
            sqlx::query("UPDATE people SET name = $1 WHERE id = $2")
                .bind(name)
                .bind(Id(person))
                .execute(self.writes())
                .await
                .map(|r| r.rows_affected() > 0)
                .map_err(|e| store_error_or(e, || person_name_taken(name)))
        }

        async fn remove_person(&self, person: Uuid) -> Result<bool, StoreError> {
            sqlx::query("DELETE FROM people WHERE id = $1")
                .bind(Id(person))
                .execute(self.writes())
                .await
                .map(|r| r.rows_affected() > 0)
                .map_err(store_error)
        }

        async fn add_device(
            &self,
            device: Uuid,
            person: &Person,
            now: OffsetDateTime,
        ) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO devices (id, inbox_id, person_id, created_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(Id(device))
            .bind(Id(person.inbox_id))
            .bind(Id(person.id))
            .bind(At(to_ms_precision(now)))
            .execute(self.writes())
            .await
            .map_err(store_error)?;
            Ok(())
        }

        async fn device_person(&self, device: Uuid) -> Result<Option<Person>, StoreError> {
            sqlx::query_as::<_, PersonRow>(concat!(
                "SELECT ",
                person_columns!(),
                " FROM devices d JOIN people p ON p.id = COALESCE(d.person_id, d.inbox_id) \
                 WHERE d.id = $1"
            ))
            .bind(Id(device))
            .fetch_optional(self.reads())
            .await
            .map_err(store_error)?
            .map(Person::try_from)
            .transpose()
        }
    }

    /// Binds what a person's settings write (all but who they are), in the order both
    /// writes list the columns: channels, quiet hours, language.
    fn bind_settings<'q>(
        query: Query<'q, Db, <Db as sqlx::Database>::Arguments>,
        p: &'q Person,
    ) -> Query<'q, Db, <Db as sqlx::Database>::Arguments> {
        let (window, tz) = PersonRow::quiet_of(p);
        query
            .bind(&p.email)
            .bind(&p.ntfy_url)
            .bind(&p.ntfy_token)
            .bind(&p.chats.slack)
            .bind(&p.chats.matrix)
            .bind(&p.chats.telegram)
            .bind(window)
            .bind(tz)
            .bind(p.lang.map(|l| l.as_str()))
    }
}
