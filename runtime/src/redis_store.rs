//! [`RedisStore`] (feature `redis`): the [`Store`] that replicas share, in Redis. One connection
//! per store, multiplexed and reconnected by the `redis` crate's connection manager; every
//! operation is bounded by one timeout, so a Redis that goes away is a [`StoreError`] (the call
//! fails closed), never a hang.

use crate::store::{Store, StoreError};
use futures_util::future::BoxFuture;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::fmt;
use std::time::Duration;

/// `replace`: set `KEYS[1]` to `ARGV[2]` for `ARGV[3]` ms if it holds exactly `ARGV[1]`, in one
/// step on the Redis side (scripts run atomically).
const COMPARE_AND_SET: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
";

/// A [`Store`] in Redis, for replicas behind a load balancer: a single-use answer consumed
/// through one replica is refused by every other.
///
/// - `insert_new` is `SET key value NX PX ttl`, `get` is `GET`, `replace` a small Lua script
///   (compare and set in one atomic step), sent by its SHA-1 (`EVALSHA`) once Redis knows it.
/// - Every operation, connecting included, ends within [`timeout`](RedisStoreBuilder::timeout)
///   (2 s by default): past it, or when Redis is unreachable, it is a [`StoreError`] and the
///   call it served is refused. The connection is re-established in the background.
/// - Keys are the framework's (`mcp-resolve/used/…` for single-use answers,
///   `mcp-resolve/url/…` for URL-mode flows) after an optional
///   [`key_prefix`](RedisStoreBuilder::key_prefix), so deployments can share one Redis.
/// - Its capacity is Redis's `maxmemory`, shared by both kinds of entries: keep the
///   `noeviction` policy (an evicted single-use entry could be replayed), and size it for the
///   flows callers may have waiting
///   ([`Server::url_flows_per_caller`](crate::Server::url_flows_per_caller), counted by each
///   replica) besides the single-use traffic.
///
/// The URL is `redis://[[user]:password@]host[:port][/db]` (or `unix:///path`); its password
/// is never logged or shown by `Debug`.
///
/// ```no_run
/// use mcp_resolve_runtime::{Server, redis_store::RedisStore};
/// use std::time::Duration;
/// # async fn run() -> Result<(), mcp_resolve_runtime::store::StoreError> {
/// let store = RedisStore::builder("redis://127.0.0.1:6379/0")
///     .key_prefix("notes-prod:")
///     .timeout(Duration::from_secs(1))
///     .connect()
///     .await?;
/// let server = Server::new("notes").store(store);
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    manager: ConnectionManager,
    prefix: String,
    timeout: Duration,
    cas: std::sync::Arc<redis::Script>,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the URL: it may carry a password.
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// How a [`RedisStore`] connects: [`RedisStore::builder`].
#[derive(Clone)]
pub struct RedisStoreBuilder {
    url: String,
    prefix: String,
    timeout: Duration,
}

impl fmt::Debug for RedisStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStoreBuilder")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// How long one operation (connecting included) may take unless told otherwise.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

    /// A store for the Redis at `url`, to be configured and then connected.
    ///
    /// ```
    /// use mcp_resolve_runtime::redis_store::RedisStore;
    /// let builder = RedisStore::builder("redis://127.0.0.1:6379").key_prefix("tenant-a:");
    /// # let _ = builder;
    /// ```
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder {
            url: url.into(),
            prefix: String::new(),
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// Connects to the Redis at `url` with the defaults (no key prefix, a 2 s timeout).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_resolve_runtime::store::StoreError> {
    /// let store = mcp_resolve_runtime::redis_store::RedisStore::connect("redis://127.0.0.1:6379").await?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// The store named by the environment variable `var` (a Redis URL), connected; `None` when
    /// it is unset or empty. A bad URL or a Redis that cannot be reached is an error whose
    /// message names the variable (never its value, which may hold a password).
    ///
    /// ```no_run
    /// # async fn run() {
    /// use mcp_resolve_runtime::{Server, redis_store::RedisStore};
    /// let mut server = Server::new("notes");
    /// match RedisStore::from_env("MCP_RESOLVE_REDIS_URL").await {
    ///     Ok(Some(store)) => server = server.store(store),
    ///     Ok(None) => {} // one replica: the memory store
    ///     Err(e) => {
    ///         eprintln!("{e}");
    ///         std::process::exit(2);
    ///     }
    /// }
    /// # let _ = server;
    /// # }
    /// ```
    pub async fn from_env(var: &str) -> Result<Option<Self>, StoreError> {
        let url = match std::env::var(var) {
            Ok(url) if !url.trim().is_empty() => url,
            Ok(_) | Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(StoreError::new(format!("{var}: not valid UTF-8")));
            }
        };
        Self::builder(url.trim())
            .connect()
            .await
            .map(Some)
            .map_err(|e| StoreError::new(format!("{var}: {}", e.reason())))
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Runs `op` on the connection within the timeout; Redis's errors become `StoreError`s.
    async fn run<T>(
        &self,
        op: impl AsyncFnOnce(&mut ConnectionManager) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut conn = self.manager.clone();
        match tokio::time::timeout(self.timeout, op(&mut conn)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(StoreError::new(format!("redis: {e}"))),
            Err(_) => Err(StoreError::new(format!("redis: no answer within {:?}", self.timeout))),
        }
    }
}

impl RedisStoreBuilder {
    /// Put before every key (e.g. `"notes-prod:"`), so several deployments can share one Redis.
    /// Default: none.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long one operation, connecting included, may take before it is a [`StoreError`]
    /// (at least 1 ms). Default [`RedisStore::DEFAULT_TIMEOUT`], 2 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Connects now (within the timeout), so that a wrong URL or an unreachable Redis stops a
    /// replica at start-up rather than refusing its first single-use call.
    pub async fn connect(self) -> Result<RedisStore, StoreError> {
        let client = redis::Client::open(self.url.as_str()).map_err(|e| {
            StoreError::new(format!(
                "not a Redis URL (redis://[[user]:password@]host[:port][/db]): {e}"
            ))
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(2)
            .set_max_delay(self.timeout);
        let manager = match tokio::time::timeout(self.timeout, ConnectionManager::new_with_config(client, config)).await
        {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => return Err(StoreError::new(format!("cannot connect to Redis: {e}"))),
            Err(_) => {
                return Err(StoreError::new(format!(
                    "cannot connect to Redis: no answer within {:?}",
                    self.timeout
                )));
            }
        };
        Ok(RedisStore {
            manager,
            prefix: self.prefix,
            timeout: self.timeout,
            cas: std::sync::Arc::new(redis::Script::new(COMPARE_AND_SET)),
        })
    }
}

/// A TTL in whole milliseconds, at least 1 (Redis refuses `PX 0`).
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl Store for RedisStore {
    fn insert_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let key = self.key(key);
            let reply: redis::Value = self
                .run(async |c| {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(value)
                        .arg("NX")
                        .arg("PX")
                        .arg(millis(ttl))
                        .query_async(c)
                        .await
                })
                .await?;
            match reply {
                redis::Value::Okay => Ok(true),
                redis::Value::SimpleString(s) if s == "OK" => Ok(true),
                redis::Value::Nil => Ok(false),
                other => Err(StoreError::new(format!(
                    "redis: unexpected answer to SET NX: {other:?}"
                ))),
            }
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(async move {
            let key = self.key(key);
            self.run(async |c| redis::cmd("GET").arg(&key).query_async(c).await)
                .await
        })
    }

    fn replace<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let key = self.key(key);
            let replaced: i64 = self
                .run(async |c| {
                    self.cas
                        .key(&key)
                        .arg(expected)
                        .arg(value)
                        .arg(millis(ttl))
                        .invoke_async(c)
                        .await
                })
                .await?;
            Ok(replaced == 1)
        })
    }
}
